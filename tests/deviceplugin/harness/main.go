// dp-harness plays the kubelet against gpufleet's device plugin, with the
// kubelet's own client library: the v1beta1 API package of k8s.io/kubelet
// (the generated gRPC stubs the kubelet's device manager uses) over
// grpc-go.  It serves Registration on DIR/kubelet.sock, waits for the
// agent's two registrations, then checks the protocol, the answers, the
// errors, health withdrawal and re-registration after a "kubelet restart",
// and prints the figures it measured (timings are reported, not asserted:
// the test machine's load decides them).  Every failed check prints FAIL and
// the exit status is non-zero.  Test tool (tests/deviceplugin).
//
//	dp-harness -dir DIR -state FAKE_NVML_STATE -gpus 8 -mem-mib 81920
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	api "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	podres "k8s.io/kubelet/pkg/apis/podresources/v1"
)

var failures int

func fail(format string, a ...any) {
	failures++
	fmt.Printf("FAIL: "+format+"\n", a...)
}

func ok(format string, a ...any) { fmt.Printf("ok: "+format+"\n", a...) }

// baseline is a grpc-go device plugin answering Allocate with a fixed
// answer of the same shape: the floor of a call over the socket in this run.
type baseline struct {
	api.UnimplementedDevicePluginServer
}

func (baseline) Allocate(ctx context.Context, req *api.AllocateRequest) (*api.AllocateResponse, error) {
	return &api.AllocateResponse{ContainerResponses: []*api.ContainerAllocateResponse{{
		Envs:       map[string]string{"NVIDIA_VISIBLE_DEVICES": req.ContainerRequests[0].DevicesIds[0]},
		CdiDevices: []*api.CDIDevice{{Name: "gpufleet.io/gpu=" + req.ContainerRequests[0].DevicesIds[0]}}}}}, nil
}

// rawCall sends body as the request body of method over plain HTTP/2 (no
// gRPC library: the framing is the caller's) and returns grpc-status and
// grpc-message from the headers or the trailers.
func rawCall(sock, method string, body []byte) (string, string, error) {
	tr := &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, n, a string, c *tls.Config) (net.Conn, error) {
		return net.Dial("unix", sock)
	}}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("POST", "http://localhost"+method, bytes.NewReader(body))
	req.Header.Set("content-type", "application/grpc")
	req.Header.Set("te", "trailers")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", "", err
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	st, msg := resp.Header.Get("grpc-status"), resp.Header.Get("grpc-message")
	if st == "" {
		st, msg = resp.Trailer.Get("grpc-status"), resp.Trailer.Get("grpc-message")
	}
	return st, msg, nil
}

// podLister answers the kubelet's pod-resources List.
type podLister struct {
	podres.UnimplementedPodResourcesListerServer
}

func (podLister) List(ctx context.Context, req *podres.ListPodResourcesRequest) (*podres.ListPodResourcesResponse, error) {
	pod := func(name, res string, ids []string) *podres.PodResources {
		return &podres.PodResources{Name: name, Namespace: "default", Containers: []*podres.ContainerResources{
			{Name: "c", Devices: []*podres.ContainerDevices{{ResourceName: res, DeviceIds: ids}}}}}
	}
	return &podres.ListPodResourcesResponse{PodResources: []*podres.PodResources{
		pod("p-share-a", "gpufleet.io/gpu-milli", units(2, 0, 250)),
		pod("intruder", "gpufleet.io/gpu-milli", units(5, 0, 250)),
		pod("p-whole", "nvidia.com/gpu", []string{uuid(1), uuid(0)}),
		pod("old", "nvidia.com/gpu", []string{uuid(7)}),
		pod("cpu-only", "cpu", []string{"0"}),
	}}, nil
}

// registrar is the kubelet's Registration service.
type registrar struct {
	api.UnimplementedRegistrationServer
	mu   sync.Mutex
	reqs chan *api.RegisterRequest
}

func (r *registrar) Register(ctx context.Context, req *api.RegisterRequest) (*api.Empty, error) {
	r.reqs <- req
	return &api.Empty{}, nil
}

func serveKubelet(dir string, reg *registrar) (*grpc.Server, error) {
	sock := filepath.Join(dir, "kubelet.sock")
	os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	s := grpc.NewServer()
	api.RegisterRegistrationServer(s, reg)
	go s.Serve(l)
	return s, nil
}

func waitRegistrations(reg *registrar, within time.Duration) map[string]*api.RegisterRequest {
	got := map[string]*api.RegisterRequest{}
	deadline := time.After(within)
	for len(got) < 2 {
		select {
		case r := <-reg.reqs:
			got[r.ResourceName] = r
		case <-deadline:
			return got
		}
	}
	return got
}

func dial(dir, endpoint string) (*grpc.ClientConn, api.DevicePluginClient) {
	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, endpoint),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Printf("FAIL: dial %s: %v\n", endpoint, err)
		os.Exit(1)
	}
	return conn, api.NewDevicePluginClient(conn)
}

func uuid(i int) string { return fmt.Sprintf("GPU-00000000-0000-0000-0000-%012d", i) }

func writeState(path string, gpus, memMiB int, lost int) {
	var b strings.Builder
	for i := 0; i < gpus; i++ {
		fmt.Fprintf(&b, "gpu %d mem_total_mib=%d mem_used_mib=0", i, memMiB)
		if i == lost {
			b.WriteString(" lost=1")
		}
		b.WriteString("\n")
	}
	tmp := path + ".tmp"
	os.WriteFile(tmp, []byte(b.String()), 0o644)
	os.Rename(tmp, path)
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*p)]
}

// benchAllocate times n Allocate calls over the socket for a whole GPU and
// for a 250-unit share (which writes its memory-cap file when the agent has
// --memcap-lib), each call alternating with the same request to the grpc-go
// baseline plugin, so both see the same machine load.
func benchAllocate(ctx context.Context, dir string, gpu, milli api.DevicePluginClient, n int) {
	bl, err := net.Listen("unix", filepath.Join(dir, "baseline.sock"))
	if err != nil {
		fmt.Printf("FAIL: baseline socket: %v\n", err)
		os.Exit(1)
	}
	bs := grpc.NewServer()
	api.RegisterDevicePluginServer(bs, baseline{})
	go bs.Serve(bl)
	bconn, base := dial(dir, "baseline.sock")
	defer bconn.Close()
	defer bs.Stop()
	share := make([]string, 250)
	for i := range share {
		share[i] = fmt.Sprintf("%s::%d", uuid(2), i)
	}
	for _, k := range []struct {
		name string
		c    api.DevicePluginClient
		ids  []string
	}{{"nvidia.com/gpu, 1 GPU", gpu, []string{uuid(3)}}, {"gpufleet.io/gpu-milli, 250 units", milli, share}} {
		req := &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: k.ids}}}
		var at, bt []time.Duration
		for i := 0; i < n+n/10; i++ { // the first tenth warms up, not counted
			t0 := time.Now()
			_, err := k.c.Allocate(ctx, req)
			d := time.Since(t0)
			if err != nil {
				fmt.Printf("FAIL: Allocate %s: %v\n", k.name, err)
				os.Exit(1)
			}
			t0 = time.Now()
			if _, err := base.Allocate(ctx, req); err != nil {
				fmt.Printf("FAIL: baseline Allocate: %v\n", err)
				os.Exit(1)
			}
			if i >= n/10 {
				at = append(at, d)
				bt = append(bt, time.Since(t0))
			}
		}
		fmt.Printf("Allocate %s, %d calls: gpufleet %v median / %v p99 / %v max; grpc-go baseline %v median / %v p99 / %v max\n",
			k.name, n, percentile(at, 0.5), percentile(at, 0.99), percentile(at, 1),
			percentile(bt, 0.5), percentile(bt, 0.99), percentile(bt, 1))
	}
}

func main() {
	dir := flag.String("dir", "", "device-plugin folder")
	state := flag.String("state", "", "the FAKE NVML's state file")
	gpus := flag.Int("gpus", 8, "GPUs in the fake state")
	memMiB := flag.Int("mem-mib", 81920, "each GPU's memory in MiB")
	match := flag.Bool("match", false, "only the pod-matching checks (pods made by tests/deviceplugin/match.sh)")
	bench := flag.Int("bench", 0, "only time N Allocate calls of each kind against the grpc-go baseline (bench/dp-allocate.sh)")
	flag.Parse()
	ctx := context.Background()

	reg := &registrar{reqs: make(chan *api.RegisterRequest, 16)}
	srv, err := serveKubelet(*dir, reg)
	if err != nil {
		fmt.Printf("FAIL: kubelet socket: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("kubelet.sock ready")

	// 1. Registration.
	got := waitRegistrations(reg, 30*time.Second)
	for _, res := range []string{"nvidia.com/gpu", "gpufleet.io/gpu-milli"} {
		r := got[res]
		if r == nil {
			fail("no registration for %s (got %v)", res, got)
			os.Exit(1)
		}
		if r.Version != "v1beta1" || r.Endpoint == "" || r.Options == nil || !r.Options.GetPreferredAllocationAvailable {
			fail("registration of %s: %+v", res, r)
		}
	}
	ok("both resources registered with v1beta1, endpoints %s and %s", got["nvidia.com/gpu"].Endpoint,
		got["gpufleet.io/gpu-milli"].Endpoint)
	gconn, gpu := dial(*dir, got["nvidia.com/gpu"].Endpoint)
	mconn, milli := dial(*dir, got["gpufleet.io/gpu-milli"].Endpoint)
	if *bench > 0 {
		benchAllocate(ctx, *dir, gpu, milli, *bench)
		gconn.Close()
		mconn.Close()
		srv.Stop()
		return
	}
	if *match {
		matchChecks(ctx, gpu, milli, *gpus)
		// The kubelet's pod-resources API as it would look after those pods
		// started, with one container under a pod other than the one its
		// devices were admitted for, and one the plugin never admitted.
		l, err := net.Listen("unix", filepath.Join(*dir, "podres.sock"))
		if err != nil {
			fail("pod-resources socket: %v", err)
			os.Exit(1)
		}
		ps := grpc.NewServer()
		podres.RegisterPodResourcesListerServer(ps, podLister{})
		go ps.Serve(l)
		fmt.Println("pod-resources ready")
		for i := 0; i < 300; i++ {
			if _, err := os.Stat(filepath.Join(*dir, "done")); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		ps.Stop()
		srv.Stop()
		if failures > 0 {
			fmt.Printf("%d check(s) failed\n", failures)
			os.Exit(1)
		}
		fmt.Println("all checks passed")
		return
	}

	// 2. Options.
	for name, c := range map[string]api.DevicePluginClient{"gpu": gpu, "milli": milli} {
		o, err := c.GetDevicePluginOptions(ctx, &api.Empty{})
		if err != nil || !o.GetPreferredAllocationAvailable || o.PreStartRequired {
			fail("GetDevicePluginOptions %s: %v %v", name, o, err)
		}
	}
	ok("GetDevicePluginOptions: preferred allocation available, no PreStartContainer")

	// 3. ListAndWatch.
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gs, err := gpu.ListAndWatch(lctx, &api.Empty{})
	if err != nil {
		fail("ListAndWatch gpu: %v", err)
		os.Exit(1)
	}
	first, err := gs.Recv()
	if err != nil || len(first.Devices) != *gpus {
		fail("ListAndWatch gpu: %d devices, %v", len(first.GetDevices()), err)
	} else {
		for i, d := range first.Devices {
			if d.ID != uuid(i) || d.Health != "Healthy" {
				fail("gpu device %d: %+v", i, d)
			}
		}
		ok("ListAndWatch nvidia.com/gpu: %d healthy GPUs, IDs = UUIDs", len(first.Devices))
	}
	var lawTimes []time.Duration
	var ms api.DevicePlugin_ListAndWatchClient
	for i := 0; i < 21; i++ {
		t0 := time.Now()
		sctx, scancel := context.WithCancel(ctx)
		s, err := milli.ListAndWatch(sctx, &api.Empty{})
		var r *api.ListAndWatchResponse
		if err == nil {
			r, err = s.Recv()
		}
		lawTimes = append(lawTimes, time.Since(t0))
		if err != nil || len(r.Devices) != *gpus*1000 {
			fail("ListAndWatch milli: %d devices, %v", len(r.GetDevices()), err)
			break
		}
		if i == 20 {
			ms = s
			defer scancel()
			if r.Devices[1234].ID != uuid(1)+"::234" {
				fail("unit 1234 is %s", r.Devices[1234].ID)
			}
		} else {
			scancel()
		}
	}
	fmt.Printf("figure: ListAndWatch of %d units delivered in %v median, %v max over %d streams (goal < 50ms)\n",
		*gpus*1000, percentile(lawTimes, 0.5), percentile(lawTimes, 1), len(lawTimes))
	ok("ListAndWatch gpufleet.io/gpu-milli: %d units, <UUID>::<unit>", *gpus*1000)

	// 4. Allocate, whole GPUs; timed over the socket, alternating with the
	// grpc-go baseline so both see the same machine load.
	bl, err := net.Listen("unix", filepath.Join(*dir, "baseline.sock"))
	if err != nil {
		fail("baseline socket: %v", err)
		os.Exit(1)
	}
	bs := grpc.NewServer()
	api.RegisterDevicePluginServer(bs, baseline{})
	go bs.Serve(bl)
	bconn, base := dial(*dir, "baseline.sock")
	var at, bt []time.Duration
	areq := &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: []string{uuid(3)}}}}
	for i := 0; i < 2000; i++ {
		t0 := time.Now()
		r, err := gpu.Allocate(ctx, areq)
		at = append(at, time.Since(t0))
		if err != nil {
			fail("Allocate gpu: %v", err)
			break
		}
		if i == 0 {
			c := r.ContainerResponses[0]
			if len(c.CdiDevices) != 1 || c.CdiDevices[0].Name != "gpufleet.io/gpu="+uuid(3) ||
				c.Envs["NVIDIA_VISIBLE_DEVICES"] != uuid(3) {
				fail("Allocate gpu answer: %+v", c)
			}
		}
		t0 = time.Now()
		if _, err := base.Allocate(ctx, areq); err != nil {
			fail("baseline Allocate: %v", err)
			break
		}
		bt = append(bt, time.Since(t0))
	}
	bconn.Close()
	bs.Stop()
	fmt.Printf("figure: Allocate over the socket, 2000 calls: gpufleet %v median / %v p99; grpc-go baseline in the same run %v median / %v p99 (goal: p99 < 1ms)\n",
		percentile(at, 0.5), percentile(at, 0.99), percentile(bt, 0.5), percentile(bt, 0.99))
	ok("Allocate nvidia.com/gpu: CDI device gpufleet.io/gpu=<UUID> + NVIDIA_VISIBLE_DEVICES")
	r2, err := gpu.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{
		{DevicesIds: []string{uuid(0), uuid(1)}}, {DevicesIds: []string{uuid(7)}}}})
	if err != nil || len(r2.ContainerResponses) != 2 ||
		r2.ContainerResponses[0].Envs["NVIDIA_VISIBLE_DEVICES"] != uuid(0)+","+uuid(1) ||
		len(r2.ContainerResponses[0].CdiDevices) != 2 || r2.ContainerResponses[1].CdiDevices[0].Name != "gpufleet.io/gpu="+uuid(7) {
		fail("Allocate 2 containers: %v %v", r2, err)
	} else {
		ok("Allocate with two containers (2 GPUs, 1 GPU): one answer each")
	}

	// 5. Allocate, shares: 250 units of GPU 2 -> a cap of 250/1000 of its memory.
	ids := []string{}
	for k := 100; k < 350; k++ {
		ids = append(ids, fmt.Sprintf("%s::%d", uuid(2), k))
	}
	r3, err := milli.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: ids}}})
	if err != nil {
		fail("Allocate milli: %v", err)
	} else {
		c := r3.ContainerResponses[0]
		want := uint64(*memMiB) << 20 / 1000 * 250
		var limit string
		for _, m := range c.Mounts {
			if m.ContainerPath == "/etc/gpufleet/memcap/limit" {
				b, _ := os.ReadFile(m.HostPath)
				limit = string(b)
			}
		}
		if c.Envs["GPUFLEET_GPU_MILLI"] != "250" || c.Envs["NVIDIA_VISIBLE_DEVICES"] != uuid(2) ||
			c.CdiDevices[0].Name != "gpufleet.io/gpu="+uuid(2) || !strings.Contains(c.Envs["LD_PRELOAD"], "libgpufleet-memcap.so") ||
			!strings.Contains(limit, fmt.Sprintf("limit_bytes = %d\n", want)) || len(c.Mounts) != 3 {
			fail("Allocate milli answer: %+v, limit file %q (want %d bytes)", c, limit, want)
		} else {
			ok("Allocate gpufleet.io/gpu-milli 250 units: GPU 2 by CDI, GPUFLEET_GPU_MILLI=250, cap file limit_bytes = %d, library and ledger mounted", want)
			// The plugin remembers limit files it wrote (one stat on
			// reuse): a file changed or removed behind it is written again.
			path := ""
			for _, m := range c.Mounts {
				if m.ContainerPath == "/etc/gpufleet/memcap/limit" {
					path = m.HostPath
				}
			}
			again := func(what string) {
				if _, err := milli.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: ids}}}); err != nil {
					fail("Allocate milli %s: %v", what, err)
					return
				}
				if b, _ := os.ReadFile(path); !strings.Contains(string(b), fmt.Sprintf("limit_bytes = %d\n", want)) {
					fail("Allocate milli %s: limit file %q", what, b)
				}
			}
			again("reused")
			os.WriteFile(path, []byte("limit_bytes = 1\n"), 0o644)
			again("after the limit file was changed")
			os.Remove(path)
			again("after the limit file was removed")
			ok("the same share again, its limit file changed, then removed: the file holds limit_bytes = %d each time", want)
		}
	}

	// 5b. A request larger than the plugin's unpacking arena (64 KiB): two
	// containers of 1,000 units each (GPUs 3 and 4), ~110 KiB of IDs.
	big := []*api.ContainerAllocateRequest{{}, {}}
	for k := 0; k < 1000; k++ {
		big[0].DevicesIds = append(big[0].DevicesIds, fmt.Sprintf("%s::%d", uuid(3), k))
		big[1].DevicesIds = append(big[1].DevicesIds, fmt.Sprintf("%s::%d", uuid(4), k))
	}
	if r, err := milli.Allocate(ctx, &api.AllocateRequest{ContainerRequests: big}); err != nil || len(r.ContainerResponses) != 2 ||
		r.ContainerResponses[0].Envs["GPUFLEET_GPU_MILLI"] != "1000" || r.ContainerResponses[1].Envs["NVIDIA_VISIBLE_DEVICES"] != uuid(4) {
		fail("Allocate of 2 x 1,000 units: %v %v", r, err)
	} else {
		ok("Allocate of 2 containers x 1,000 units (a request past the unpacking arena): both answered")
	}

	// 6. Bad input: clear statuses, and the plugin keeps serving.
	_, err = gpu.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: []string{"GPU-nope"}}}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "unknown device ID 'GPU-nope'") {
		fail("unknown ID: %v", err)
	}
	_, err = milli.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{
		{DevicesIds: []string{uuid(0) + "::1", uuid(1) + "::1"}}}})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), "a share must come from one GPU") {
		fail("units from two GPUs: %v", err)
	}
	_, err = milli.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{
		{DevicesIds: []string{uuid(0) + "::1000"}}}})
	if status.Code(err) != codes.InvalidArgument {
		fail("unit 1000: %v", err)
	}
	// A device ID with a NUL byte: the C string would end there and name a
	// real GPU (or unit); refused, the ID named with the NUL escaped.
	_, err = gpu.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: []string{uuid(2) + "\x00junk"}}}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "device ID '"+uuid(2)+"\\x00junk' holds a NUL byte") {
		fail("device ID with a NUL: %v", err)
	}
	_, err = milli.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: []string{uuid(2) + "::5\x00x"}}}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "holds a NUL byte") {
		fail("unit ID with a NUL: %v", err)
	}
	_, err = gpu.GetPreferredAllocation(ctx, &api.PreferredAllocationRequest{ContainerRequests: []*api.ContainerPreferredAllocationRequest{
		{AvailableDeviceIDs: []string{uuid(0), uuid(1)}, MustIncludeDeviceIDs: []string{uuid(1) + "\x00"}, AllocationSize: 1}}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "holds a NUL byte") {
		fail("GetPreferredAllocation with a NUL in an ID: %v", err)
	}
	// Preferred-allocation sizes past the devices there are: refused.
	_, err = gpu.GetPreferredAllocation(ctx, &api.PreferredAllocationRequest{ContainerRequests: []*api.ContainerPreferredAllocationRequest{
		{AvailableDeviceIDs: []string{uuid(0), uuid(1)}, AllocationSize: 2000000000}}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "allocation size 2000000000, this resource has 8 devices") {
		fail("GetPreferredAllocation of 2e9 GPUs: %v", err)
	}
	many := make([]string, 9000)
	for k := range many {
		many[k] = fmt.Sprintf("%s::%d", uuid(0), k%1000)
	}
	_, err = milli.GetPreferredAllocation(ctx, &api.PreferredAllocationRequest{ContainerRequests: []*api.ContainerPreferredAllocationRequest{
		{AvailableDeviceIDs: many, AllocationSize: 10}}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "9000 available") {
		fail("GetPreferredAllocation of 9,000 of 8,000 units: %v", err)
	}
	ok("a device ID with a NUL byte (Allocate, GetPreferredAllocation) and preferred sizes past the devices (2e9 GPUs, 9,000 of 8,000 units) -> InvalidArgument")
	err = gconn.Invoke(ctx, "/v1beta1.DevicePlugin/Allocate", &api.Empty{}, &api.AllocateResponse{})
	if err != nil {
		fail("Allocate with an empty request: %v (want an empty answer)", err)
	}
	err = gconn.Invoke(ctx, "/v1beta1.DevicePlugin/Nope", &api.Empty{}, &api.Empty{})
	if status.Code(err) != codes.Unimplemented {
		fail("unknown method: %v", err)
	}
	gsock := filepath.Join(*dir, got["nvidia.com/gpu"].Endpoint)
	for _, bad := range []struct {
		body []byte
		what string
	}{{[]byte{0, 0, 0, 0, 9, 1, 2}, "prefix says 9 bytes, the body holds 2"},
		{[]byte{1, 0, 0, 0, 0}, "compressed flag 1"},
		{[]byte{0, 0}, "2 bytes, a message needs a 5-byte prefix"},
		{[]byte{0, 0, 0, 0, 3, 0xff, 0xff, 0xff}, "not a valid AllocateRequest"}} {
		st, msg, err := rawCall(gsock, "/v1beta1.DevicePlugin/Allocate", bad.body)
		if err != nil || (st != "13" && st != "3") || !strings.Contains(msg, bad.what) {
			fail("malformed request %x: status %q message %q err %v", bad.body, st, msg, err)
		}
	}
	if _, err := gpu.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: []string{uuid(4)}}}}); err != nil {
		fail("Allocate after the errors: %v", err)
	}
	ok("bad input: malformed gRPC framing -> Internal, undecodable protobuf / unknown ID -> InvalidArgument, units of two GPUs -> FailedPrecondition, unknown method -> Unimplemented; still serving")

	// 7. GetPreferredAllocation: one GPU, best fit.
	avail := []string{}
	for k := 0; k < 100; k++ {
		avail = append(avail, fmt.Sprintf("%s::%d", uuid(0), k))
	}
	for k := 0; k < 1000; k++ {
		avail = append(avail, fmt.Sprintf("%s::%d", uuid(1), k))
	}
	pr, err := milli.GetPreferredAllocation(ctx, &api.PreferredAllocationRequest{ContainerRequests: []*api.ContainerPreferredAllocationRequest{
		{AvailableDeviceIDs: avail, AllocationSize: 100}, {AvailableDeviceIDs: avail, AllocationSize: 300},
		{AvailableDeviceIDs: avail, MustIncludeDeviceIDs: []string{uuid(1) + "::999"}, AllocationSize: 50}}})
	if err != nil || len(pr.ContainerResponses) != 3 {
		fail("GetPreferredAllocation: %v %v", pr, err)
	} else {
		onGPU := func(ids []string, g int, n int) bool {
			if len(ids) != n {
				return false
			}
			for _, id := range ids {
				if !strings.HasPrefix(id, uuid(g)+"::") {
					return false
				}
			}
			return true
		}
		c := pr.ContainerResponses
		if !onGPU(c[0].DeviceIDs, 0, 100) || !onGPU(c[1].DeviceIDs, 1, 300) || !onGPU(c[2].DeviceIDs, 1, 50) ||
			c[2].DeviceIDs[0] != uuid(1)+"::999" {
			fail("GetPreferredAllocation picks: %d/%d/%d", len(c[0].DeviceIDs), len(c[1].DeviceIDs), len(c[2].DeviceIDs))
		} else {
			ok("GetPreferredAllocation: 100 -> the GPU with exactly 100 free, 300 -> the other, must_include kept and its GPU used")
		}
	}

	// 8. Health: GPU 5 lost -> both lists resent with it Unhealthy.
	t0 := time.Now()
	writeState(*state, *gpus, *memMiB, 5)
	upd := make(chan *api.ListAndWatchResponse, 2)
	go func() {
		if r, err := gs.Recv(); err == nil {
			upd <- r
		}
	}()
	go func() {
		if r, err := ms.Recv(); err == nil {
			upd <- r
		}
	}()
	seen := 0
	timeout := time.After(10 * time.Second)
	for seen < 2 {
		select {
		case r := <-upd:
			seen++
			unhealthy := 0
			for _, d := range r.Devices {
				if d.Health != "Healthy" {
					unhealthy++
					if !strings.HasPrefix(d.ID, uuid(5)) {
						fail("unhealthy device %s is not GPU 5's", d.ID)
					}
				}
			}
			if unhealthy != 1 && unhealthy != 1000 {
				fail("after GPU 5 was lost: %d unhealthy devices", unhealthy)
			}
		case <-timeout:
			fail("no updated list within 10 s after GPU 5 was lost (%d of 2)", seen)
			seen = 2
		}
	}
	fmt.Printf("figure: GPU lost -> both lists resent in %v\n", time.Since(t0).Round(time.Millisecond))
	ok("an unhealthy GPU (FAKE NVML: lost) is withdrawn from both resources")
	_, err = gpu.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: []string{uuid(5)}}}})
	if status.Code(err) != codes.FailedPrecondition {
		fail("Allocate of the lost GPU: %v", err)
	}

	// 9. Kubelet restart: sockets removed, a new kubelet.sock -> both registered again.
	gconn.Close()
	mconn.Close()
	srv.Stop()
	t0 = time.Now()
	entries, _ := os.ReadDir(*dir)
	for _, e := range entries {
		os.Remove(filepath.Join(*dir, e.Name()))
	}
	if srv, err = serveKubelet(*dir, reg); err != nil {
		fail("kubelet restart: %v", err)
		os.Exit(1)
	}
	got = waitRegistrations(reg, 10*time.Second)
	took := time.Since(t0)
	fmt.Printf("figure: kubelet restart -> re-registered in %v\n", took.Round(time.Millisecond))
	if len(got) != 2 || took > 5*time.Second {
		fail("after a kubelet restart: %d registrations in %v", len(got), took)
	} else {
		_, gpu2 := dial(*dir, got["nvidia.com/gpu"].Endpoint)
		s, err := gpu2.ListAndWatch(ctx, &api.Empty{})
		var r *api.ListAndWatchResponse
		if err == nil {
			r, err = s.Recv()
		}
		if err != nil || len(r.Devices) != *gpus {
			fail("ListAndWatch after the restart: %v %v", r, err)
		} else {
			ok("kubelet restart: sockets recreated, both resources re-registered and devices resent within 5 s")
		}
	}

	// 10. Agent restart: the test script stops the agent and starts a new
	// one when it reads "restart the agent"; both resources must register
	// again and resend their devices.
	writeState(*state, *gpus, *memMiB, -1) // GPU 5 back (a lost GPU is not identified at start)
	fmt.Println("restart the agent")
	t0 = time.Now()
	got = waitRegistrations(reg, 20*time.Second)
	took = time.Since(t0)
	if len(got) != 2 {
		fail("after an agent restart: %d registrations", len(got))
	} else {
		_, milli2 := dial(*dir, got["gpufleet.io/gpu-milli"].Endpoint)
		s, err := milli2.ListAndWatch(ctx, &api.Empty{})
		var r *api.ListAndWatchResponse
		if err == nil {
			r, err = s.Recv()
		}
		took = time.Since(t0)
		fmt.Printf("figure: agent restart (stop, start, NVML, register, list) -> %d units resent %v after the stop was asked\n",
			len(r.GetDevices()), took.Round(time.Millisecond))
		healthy := 0
		for _, d := range r.GetDevices() {
			if d.Health == "Healthy" {
				healthy++
			}
		}
		if err != nil || len(r.Devices) != *gpus*1000 || healthy != *gpus*1000 {
			fail("ListAndWatch after the agent restart: %d devices, %d healthy, %v", len(r.GetDevices()), healthy, err)
		} else {
			ok("agent restart: both resources re-registered, %d units resent", len(r.Devices))
		}
	}
	srv.Stop()
	if failures > 0 {
		fmt.Printf("%d check(s) failed\n", failures)
		os.Exit(1)
	}
	fmt.Println("all checks passed")
}

func units(g, from, n int) []string {
	var ids []string
	for k := from; k < from+n; k++ {
		ids = append(ids, fmt.Sprintf("%s::%d", uuid(g), k))
	}
	return ids
}

func gpuOf(ids []string) string {
	g := ""
	for _, id := range ids {
		u := strings.SplitN(id, "::", 2)[0]
		if g != "" && g != u {
			return "several"
		}
		g = u
	}
	return g
}

// matchChecks: pods (made by match.sh, oldest first) p-share-a 250/1000 of
// GPU 2, p-share-b 250/1000 of GPU 5, p-whole GPUs 0 and 1.
func matchChecks(ctx context.Context, gpu, milli api.DevicePluginClient, gpus int) {
	all := []string{}
	for g := 0; g < gpus; g++ {
		all = append(all, units(g, 0, 1000)...)
	}
	prefer := func(c api.DevicePluginClient, avail []string, n int32) []string {
		r, err := c.GetPreferredAllocation(ctx, &api.PreferredAllocationRequest{ContainerRequests: []*api.ContainerPreferredAllocationRequest{
			{AvailableDeviceIDs: avail, AllocationSize: n}}})
		if err != nil {
			fail("GetPreferredAllocation: %v", err)
			return nil
		}
		return r.ContainerResponses[0].DeviceIDs
	}
	alloc := func(c api.DevicePluginClient, ids []string) (string, error) {
		r, err := c.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: ids}}})
		if err != nil {
			return "", err
		}
		return r.ContainerResponses[0].Annotations["gpufleet.io/pod"], nil
	}
	if p := prefer(milli, all, 250); len(p) != 250 || gpuOf(p) != uuid(2) {
		fail("preferred for 250 units: %d units of %s, want GPU 2 (p-share-a)", len(p), gpuOf(p))
	}
	_, err := alloc(milli, units(3, 0, 250))
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), "no pending pod on node") {
		fail("Allocate of GPU 3's units with no pod assigned there: %v", err)
	}
	if pod, err := alloc(milli, units(2, 0, 250)); err != nil || pod != "default/p-share-a" {
		fail("Allocate GPU 2: pod %q, %v", pod, err)
	}
	if p := prefer(milli, all, 250); gpuOf(p) != uuid(5) {
		fail("second preference for 250 units: %s, want GPU 5 (p-share-b)", gpuOf(p))
	}
	if pod, err := alloc(milli, units(5, 0, 250)); err != nil || pod != "default/p-share-b" {
		fail("Allocate GPU 5: pod %q, %v", pod, err)
	}
	if _, err := alloc(milli, units(5, 250, 250)); status.Code(err) != codes.FailedPrecondition {
		fail("a third 250-unit Allocate with both pods admitted: %v", err)
	}
	ok("shares: the kubelet steered to the assigned GPU of the oldest pending pod; Allocate admits only an assigned GPU, once per pod")
	wholes := []string{}
	for g := 0; g < gpus; g++ {
		wholes = append(wholes, uuid(g))
	}
	if p := prefer(gpu, wholes, 2); len(p) != 2 || p[0] != uuid(0) || p[1] != uuid(1) {
		fail("preferred for 2 GPUs: %v", p)
	}
	if _, err := alloc(gpu, []string{uuid(6), uuid(7)}); status.Code(err) != codes.FailedPrecondition {
		fail("Allocate of GPUs 6,7 (not assigned): %v", err)
	}
	if pod, err := alloc(gpu, []string{uuid(1), uuid(0)}); err != nil || pod != "default/p-whole" {
		fail("Allocate GPUs 1,0: pod %q, %v", pod, err)
	}
	if _, err := alloc(gpu, []string{uuid(0), uuid(1)}); status.Code(err) != codes.FailedPrecondition {
		fail("second Allocate of GPUs 0,1: %v", err)
	}
	ok("whole GPUs: steered to the assigned pair; other GPUs refused; admitted once")
}
