/*
 * cli/commands.h - the subcommands of the gpufleet binary.
 *
 * Each subcommand is one function taking the arguments after its name
 * (argv[0] is the subcommand name) and returning the process exit status.
 * Adding a subcommand is one file and one line in the table in main.c.
 */
#ifndef GF_CLI_COMMANDS_H
#define GF_CLI_COMMANDS_H

int gf_cmd_simulate(int argc, char **argv);
int gf_cmd_agent(int argc, char **argv);
int gf_cmd_schedule(int argc, char **argv);
int gf_cmd_metrics_api(int argc, char **argv);
/* `replay`: cmd_replay.c dispatches --serving to the serving replay, the rest to the job replay. */
int gf_cmd_replay(int argc, char **argv);
int gf_cmd_replay_serving(int argc, char **argv);
int gf_cmd_replay_spot(int argc, char **argv);
int gf_cmd_replay_autoscale(int argc, char **argv);
int gf_cmd_replay_jobs(int argc, char **argv);
int gf_cmd_cost(int argc, char **argv);
int gf_cmd_queue(int argc, char **argv);

#endif /* GF_CLI_COMMANDS_H */
