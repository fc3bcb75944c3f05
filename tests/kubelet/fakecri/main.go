// Command fakecri is a FAKE container runtime for the kubelet test (ctest
// label kubelet): it serves the CRI v1 RuntimeService and ImageService on a
// unix socket, runs nothing, and records every CreateContainer request (the
// container config as the kubelet sends it: CDI devices, env, mounts,
// annotations, and the sandbox's pod metadata) as one JSON line in -record.
// Sandboxes and containers only change state in memory: a started container
// is "running" until the kubelet stops it. Images always exist.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	rt "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type sandbox struct {
	id      string
	cfg     *rt.PodSandboxConfig
	state   rt.PodSandboxState
	created int64
	ip      string
}

type container struct {
	id, sandbox      string
	cfg              *rt.ContainerConfig
	state            rt.ContainerState
	created, started int64
	finished         int64
	image            string
}

type fake struct {
	rt.UnimplementedRuntimeServiceServer
	rt.UnimplementedImageServiceServer
	mu         sync.Mutex
	next       int
	sandboxes  map[string]*sandbox
	containers map[string]*container
	record     *os.File
}

func (f *fake) id(prefix string) string {
	f.next++
	return fmt.Sprintf("%s%063d", prefix, f.next)
}

// The record: one line per CreateContainer.
type recorded struct {
	Time        string            `json:"time"`
	PodName     string            `json:"pod"`
	PodNS       string            `json:"namespace"`
	PodUID      string            `json:"uid"`
	Container   string            `json:"container"`
	CDIDevices  []string          `json:"cdi_devices"`
	Envs        map[string]string `json:"envs"`
	Mounts      map[string]string `json:"mounts"` // container path -> host path
	Devices     []string          `json:"devices"`
	Annotations map[string]string `json:"annotations"`
}

func (f *fake) Version(ctx context.Context, r *rt.VersionRequest) (*rt.VersionResponse, error) {
	return &rt.VersionResponse{Version: "0.1.0", RuntimeName: "gpufleet-fakecri", RuntimeVersion: "0.1.0", RuntimeApiVersion: "v1"}, nil
}

func (f *fake) Status(ctx context.Context, r *rt.StatusRequest) (*rt.StatusResponse, error) {
	return &rt.StatusResponse{Status: &rt.RuntimeStatus{Conditions: []*rt.RuntimeCondition{
		{Type: rt.RuntimeReady, Status: true}, {Type: rt.NetworkReady, Status: true}}}}, nil
}

func (f *fake) RuntimeConfig(ctx context.Context, r *rt.RuntimeConfigRequest) (*rt.RuntimeConfigResponse, error) {
	return &rt.RuntimeConfigResponse{Linux: &rt.LinuxRuntimeConfiguration{CgroupDriver: rt.CgroupDriver_CGROUPFS}}, nil
}

func (f *fake) UpdateRuntimeConfig(ctx context.Context, r *rt.UpdateRuntimeConfigRequest) (*rt.UpdateRuntimeConfigResponse, error) {
	return &rt.UpdateRuntimeConfigResponse{}, nil
}

func (f *fake) RunPodSandbox(ctx context.Context, r *rt.RunPodSandboxRequest) (*rt.RunPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &sandbox{id: f.id("s"), cfg: r.Config, state: rt.PodSandboxState_SANDBOX_READY, created: time.Now().UnixNano()}
	s.ip = fmt.Sprintf("10.88.%d.%d", (f.next/250)%250, f.next%250+1)
	f.sandboxes[s.id] = s
	return &rt.RunPodSandboxResponse{PodSandboxId: s.id}, nil
}

func (f *fake) StopPodSandbox(ctx context.Context, r *rt.StopPodSandboxRequest) (*rt.StopPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.sandboxes[r.PodSandboxId]; s != nil {
		s.state = rt.PodSandboxState_SANDBOX_NOTREADY
		for _, c := range f.containers {
			if c.sandbox == s.id && c.state == rt.ContainerState_CONTAINER_RUNNING {
				c.state, c.finished = rt.ContainerState_CONTAINER_EXITED, time.Now().UnixNano()
			}
		}
	}
	return &rt.StopPodSandboxResponse{}, nil
}

func (f *fake) RemovePodSandbox(ctx context.Context, r *rt.RemovePodSandboxRequest) (*rt.RemovePodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, c := range f.containers {
		if c.sandbox == r.PodSandboxId {
			delete(f.containers, id)
		}
	}
	delete(f.sandboxes, r.PodSandboxId)
	return &rt.RemovePodSandboxResponse{}, nil
}

func (s *sandbox) meta() *rt.PodSandboxMetadata { return s.cfg.GetMetadata() }

func (f *fake) PodSandboxStatus(ctx context.Context, r *rt.PodSandboxStatusRequest) (*rt.PodSandboxStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sandboxes[r.PodSandboxId]
	if s == nil {
		return nil, status.Errorf(codes.NotFound, "sandbox %q not found", r.PodSandboxId)
	}
	return &rt.PodSandboxStatusResponse{Status: &rt.PodSandboxStatus{
		Id: s.id, Metadata: s.meta(), State: s.state, CreatedAt: s.created,
		Network: &rt.PodSandboxNetworkStatus{Ip: s.ip},
		Linux:   &rt.LinuxPodSandboxStatus{Namespaces: &rt.Namespace{Options: &rt.NamespaceOption{}}},
		Labels:  s.cfg.Labels, Annotations: s.cfg.Annotations,
	}}, nil
}

func (f *fake) ListPodSandbox(ctx context.Context, r *rt.ListPodSandboxRequest) (*rt.ListPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []*rt.PodSandbox{}
	flt := r.GetFilter()
	for _, s := range f.sandboxes {
		if flt != nil && ((flt.Id != "" && flt.Id != s.id) || (flt.State != nil && flt.State.State != s.state) || !match(flt.LabelSelector, s.cfg.Labels)) {
			continue
		}
		out = append(out, &rt.PodSandbox{Id: s.id, Metadata: s.meta(), State: s.state, CreatedAt: s.created, Labels: s.cfg.Labels, Annotations: s.cfg.Annotations})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return &rt.ListPodSandboxResponse{Items: out}, nil
}

func match(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (f *fake) CreateContainer(ctx context.Context, r *rt.CreateContainerRequest) (*rt.CreateContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sandboxes[r.PodSandboxId] == nil {
		return nil, status.Errorf(codes.NotFound, "sandbox %q not found", r.PodSandboxId)
	}
	c := &container{id: f.id("c"), sandbox: r.PodSandboxId, cfg: r.Config, state: rt.ContainerState_CONTAINER_CREATED,
		created: time.Now().UnixNano(), image: r.Config.GetImage().GetImage()}
	f.containers[c.id] = c
	m := r.SandboxConfig.GetMetadata()
	rec := recorded{Time: time.Now().UTC().Format(time.RFC3339Nano), PodName: m.GetName(), PodNS: m.GetNamespace(), PodUID: m.GetUid(),
		Container: r.Config.GetMetadata().GetName(), Envs: map[string]string{}, Mounts: map[string]string{}, Annotations: r.Config.Annotations,
		CDIDevices: []string{}, Devices: []string{}}
	for _, d := range r.Config.CDIDevices {
		rec.CDIDevices = append(rec.CDIDevices, d.Name)
	}
	for _, e := range r.Config.Envs {
		rec.Envs[e.Key] = string(e.Value)
	}
	for _, mt := range r.Config.Mounts {
		rec.Mounts[mt.ContainerPath] = mt.HostPath
	}
	for _, d := range r.Config.Devices {
		rec.Devices = append(rec.Devices, d.HostPath+":"+d.ContainerPath)
	}
	b, _ := json.Marshal(rec)
	if _, err := f.record.Write(append(b, '\n')); err != nil {
		return nil, status.Errorf(codes.Internal, "record: %v", err)
	}
	return &rt.CreateContainerResponse{ContainerId: c.id}, nil
}

func (f *fake) StartContainer(ctx context.Context, r *rt.StartContainerRequest) (*rt.StartContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[r.ContainerId]
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "container %q not found", r.ContainerId)
	}
	c.state, c.started = rt.ContainerState_CONTAINER_RUNNING, time.Now().UnixNano()
	return &rt.StartContainerResponse{}, nil
}

func (f *fake) StopContainer(ctx context.Context, r *rt.StopContainerRequest) (*rt.StopContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.containers[r.ContainerId]; c != nil && c.state != rt.ContainerState_CONTAINER_EXITED {
		c.state, c.finished = rt.ContainerState_CONTAINER_EXITED, time.Now().UnixNano()
	}
	return &rt.StopContainerResponse{}, nil
}

func (f *fake) RemoveContainer(ctx context.Context, r *rt.RemoveContainerRequest) (*rt.RemoveContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.containers, r.ContainerId)
	return &rt.RemoveContainerResponse{}, nil
}

func (c *container) brief() *rt.Container {
	return &rt.Container{Id: c.id, PodSandboxId: c.sandbox, Metadata: c.cfg.GetMetadata(), Image: c.cfg.GetImage(), ImageRef: "sha256:" + fmt.Sprintf("%064x", 1),
		State: c.state, CreatedAt: c.created, Labels: c.cfg.Labels, Annotations: c.cfg.Annotations}
}

func (f *fake) ListContainers(ctx context.Context, r *rt.ListContainersRequest) (*rt.ListContainersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []*rt.Container{}
	flt := r.GetFilter()
	for _, c := range f.containers {
		if flt != nil && ((flt.Id != "" && flt.Id != c.id) || (flt.PodSandboxId != "" && flt.PodSandboxId != c.sandbox) ||
			(flt.State != nil && flt.State.State != c.state) || !match(flt.LabelSelector, c.cfg.Labels)) {
			continue
		}
		out = append(out, c.brief())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return &rt.ListContainersResponse{Containers: out}, nil
}

func (f *fake) ContainerStatus(ctx context.Context, r *rt.ContainerStatusRequest) (*rt.ContainerStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[r.ContainerId]
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "container %q not found", r.ContainerId)
	}
	st := &rt.ContainerStatus{Id: c.id, Metadata: c.cfg.GetMetadata(), State: c.state, CreatedAt: c.created, StartedAt: c.started,
		FinishedAt: c.finished, Image: c.cfg.GetImage(), ImageRef: "sha256:" + fmt.Sprintf("%064x", 1), Labels: c.cfg.Labels,
		Annotations: c.cfg.Annotations, LogPath: c.cfg.LogPath}
	if c.state == rt.ContainerState_CONTAINER_EXITED {
		st.Reason = "Completed"
	}
	return &rt.ContainerStatusResponse{Status: st}, nil
}

func (f *fake) UpdateContainerResources(ctx context.Context, r *rt.UpdateContainerResourcesRequest) (*rt.UpdateContainerResourcesResponse, error) {
	return &rt.UpdateContainerResourcesResponse{}, nil
}

func (f *fake) ReopenContainerLog(ctx context.Context, r *rt.ReopenContainerLogRequest) (*rt.ReopenContainerLogResponse, error) {
	return &rt.ReopenContainerLogResponse{}, nil
}

func (f *fake) ListContainerStats(ctx context.Context, r *rt.ListContainerStatsRequest) (*rt.ListContainerStatsResponse, error) {
	return &rt.ListContainerStatsResponse{}, nil
}

func (f *fake) ListPodSandboxStats(ctx context.Context, r *rt.ListPodSandboxStatsRequest) (*rt.ListPodSandboxStatsResponse, error) {
	return &rt.ListPodSandboxStatsResponse{}, nil
}

// ImageService: every image exists, nothing is pulled.
func image(ref string) *rt.Image {
	return &rt.Image{Id: "sha256:" + fmt.Sprintf("%064x", 1), RepoTags: []string{ref}, Size: 1 << 20, Spec: &rt.ImageSpec{Image: ref}}
}

func (f *fake) ListImages(ctx context.Context, r *rt.ListImagesRequest) (*rt.ListImagesResponse, error) {
	return &rt.ListImagesResponse{}, nil
}

func (f *fake) ImageStatus(ctx context.Context, r *rt.ImageStatusRequest) (*rt.ImageStatusResponse, error) {
	return &rt.ImageStatusResponse{Image: image(r.GetImage().GetImage())}, nil
}

func (f *fake) PullImage(ctx context.Context, r *rt.PullImageRequest) (*rt.PullImageResponse, error) {
	return &rt.PullImageResponse{ImageRef: image(r.GetImage().GetImage()).Id}, nil
}

func (f *fake) RemoveImage(ctx context.Context, r *rt.RemoveImageRequest) (*rt.RemoveImageResponse, error) {
	return &rt.RemoveImageResponse{}, nil
}

func (f *fake) ImageFsInfo(ctx context.Context, r *rt.ImageFsInfoRequest) (*rt.ImageFsInfoResponse, error) {
	u := &rt.FilesystemUsage{Timestamp: time.Now().UnixNano(), FsId: &rt.FilesystemIdentifier{Mountpoint: "/tmp"},
		UsedBytes: &rt.UInt64Value{Value: 1 << 20}, InodesUsed: &rt.UInt64Value{Value: 10}}
	return &rt.ImageFsInfoResponse{ImageFilesystems: []*rt.FilesystemUsage{u}, ContainerFilesystems: []*rt.FilesystemUsage{u}}, nil
}

func main() {
	listen := flag.String("listen", "", "unix socket path")
	record := flag.String("record", "", "file receiving one JSON line per CreateContainer")
	flag.Parse()
	if *listen == "" || *record == "" {
		log.Fatal("fakecri: -listen and -record are required")
	}
	rec, err := os.OpenFile(*record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		log.Fatalf("fakecri: %v", err)
	}
	os.Remove(*listen)
	l, err := net.Listen("unix", *listen)
	if err != nil {
		log.Fatalf("fakecri: %v", err)
	}
	f := &fake{sandboxes: map[string]*sandbox{}, containers: map[string]*container{}, record: rec}
	s := grpc.NewServer()
	rt.RegisterRuntimeServiceServer(s, f)
	rt.RegisterImageServiceServer(s, f)
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
		<-ch
		s.Stop()
	}()
	log.Printf("fakecri: serving CRI v1 on %s, recording to %s", *listen, *record)
	if err := s.Serve(l); err != nil {
		log.Fatalf("fakecri: %v", err)
	}
}
