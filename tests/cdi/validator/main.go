// cdi-validate: loads CDI spec files with the reference CDI implementation
// (tags.cncf.io/container-device-interface) and reports every error it finds;
// optionally injects devices into an OCI runtime spec (config.json) the way a
// container runtime does.  Test tool for gpufleet's agent (tests/cdi).
//
//	cdi-validate SPEC_DIR                          list devices, fail on any error
//	cdi-validate SPEC_DIR CONFIG_JSON DEVICE...    also inject DEVICE... into CONFIG_JSON (rewritten)
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	oci "github.com/opencontainers/runtime-spec/specs-go"
	"tags.cncf.io/container-device-interface/pkg/cdi"
)

func main() {
	if len(os.Args) < 2 || len(os.Args) == 3 {
		fmt.Fprintln(os.Stderr, "usage: cdi-validate SPEC_DIR [CONFIG_JSON DEVICE...]")
		os.Exit(2)
	}
	dir := os.Args[1]
	nerr := 0

	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	yamls, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	files = append(files, yamls...)
	if len(files) == 0 {
		fmt.Fprintf(os.Stderr, "cdi-validate: no spec files in %s\n", dir)
		os.Exit(1)
	}
	// The registry: strict parsing (unknown fields rejected), the spec's
	// validation (versions, names, edits), name conflicts.
	cache, err := cdi.NewCache(cdi.WithSpecDirs(dir), cdi.WithAutoRefresh(false))
	if err != nil {
		fmt.Printf("cache error: %v\n", err)
		nerr++
	}
	for path, errs := range cache.GetErrors() {
		for _, e := range errs {
			fmt.Printf("spec error: %s: %v\n", path, e)
			nerr++
		}
	}
	devs := cache.ListDevices()
	sort.Strings(devs)
	for _, d := range devs {
		fmt.Printf("device %s\n", d)
	}

	if len(os.Args) > 3 {
		cfg := os.Args[2]
		data, err := os.ReadFile(cfg)
		if err != nil {
			fmt.Printf("inject error: %v\n", err)
			os.Exit(1)
		}
		var spec oci.Spec
		if err := json.Unmarshal(data, &spec); err != nil {
			fmt.Printf("inject error: %s: %v\n", cfg, err)
			os.Exit(1)
		}
		unresolved, err := cache.InjectDevices(&spec, os.Args[3:]...)
		if err != nil {
			fmt.Printf("inject error: %v (unresolved %v)\n", err, unresolved)
			nerr++
		} else {
			out, _ := json.MarshalIndent(&spec, "", "  ")
			if err := os.WriteFile(cfg, out, 0o644); err != nil {
				fmt.Printf("inject error: %v\n", err)
				nerr++
			} else {
				fmt.Printf("injected %v into %s\n", os.Args[3:], cfg)
			}
		}
	}
	fmt.Printf("%d errors\n", nerr)
	if nerr > 0 {
		os.Exit(1)
	}
}
