// A statically linked Go program (built with CGO_ENABLED=0, so it makes raw syscalls
// rather than going through libc) that exercises what the Go runtime needs from the
// kernel: threads (clone), futexes, epoll-driven networking, timers, signals (SIGURG
// for asynchronous preemption, SIGUSR1 through os/signal), fork+exec of children
// (clone with CLONE_VFORK|CLONE_VM) and a stop-the-world GC.
//
// Everything it prints is deterministic; anything timing-dependent is reduced to a
// yes/no that holds by a wide margin.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func check(err error) {
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
}

// preemption: with GOMAXPROCS(2), two goroutines spin in loops that contain no call
// and so no cooperative preemption point. Both Ps are taken; the main goroutine's
// sleep, a ticker goroutine and a forced GC (stop-the-world) can only make progress if
// sysmon preempts the spinners asynchronously, which it does by sending SIGURG to
// their threads. Without working signal delivery this deadlocks.
func preemption() {
	var stop atomic.Bool
	var ready, done sync.WaitGroup
	for i := 0; i < 2; i++ {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			n := uint64(0)
			for !stop.Load() {
				n++
			}
			_ = n
		}()
	}
	ready.Wait()

	var ticks atomic.Int64
	tickerDone := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				ticks.Add(1)
			case <-tickerDone:
				return
			}
		}
	}()

	time.Sleep(100 * time.Millisecond)
	runtime.GC() // stop-the-world while both spinners run
	time.Sleep(100 * time.Millisecond)
	stop.Store(true)
	done.Wait()
	close(tickerDone)
	fmt.Println("preemption: spinners stopped, gc done, ticker progressed:", ticks.Load() >= 3)
}

func httpRoundTrips() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	mux := http.NewServeMux()
	mux.HandleFunc("/fib/", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/fib/"))
		if err != nil {
			http.Error(w, "bad n", http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d", fib(n))
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Len", strconv.Itoa(len(body)))
		w.Write(bytes.ToUpper(body))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
		for i := 0; i < 32; i++ {                                 // 2 MiB, several writes
			w.Write(chunk)
		}
	})
	srv := &http.Server{Handler: mux}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 30 * time.Second}

	const n = 16
	results := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			resp, err := client.Get(fmt.Sprintf("%s/fib/%d", base, 10+i))
			if err != nil {
				results[i] = "error: " + err.Error()
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			results[i] = fmt.Sprintf("%d %s", resp.StatusCode, b)
		}(i)
	}
	wg.Wait()
	for i, r := range results {
		fmt.Printf("GET /fib/%d -> %s\n", 10+i, r)
	}

	resp, err := client.Post(base+"/echo", "text/plain", strings.NewReader("hello strata"))
	check(err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("POST /echo -> %d %s (X-Len %s)\n", resp.StatusCode, b, resp.Header.Get("X-Len"))

	resp, err = client.Get(base + "/big")
	check(err)
	h := sha256.New()
	nbytes, err := io.Copy(h, resp.Body)
	check(err)
	resp.Body.Close()
	fmt.Printf("GET /big -> %d, %d bytes, sha256 %x\n", resp.StatusCode, nbytes, h.Sum(nil))

	resp, err = client.Get(base + "/fib/x")
	check(err)
	resp.Body.Close()
	fmt.Println("GET /fib/x ->", resp.StatusCode)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check(srv.Shutdown(ctx))
	err = <-served
	fmt.Println("server stopped:", errors.Is(err, http.ErrServerClosed))
}

func signals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	check(syscall.Kill(os.Getpid(), syscall.SIGUSR1))
	select {
	case s := <-ch:
		fmt.Println("signal received:", s)
	case <-time.After(30 * time.Second):
		fmt.Println("signal: timed out")
	}
	signal.Stop(ch)
}

func children() {
	out, err := exec.Command("/bin/echo", "hello", "from", "a", "child").Output()
	check(err)
	fmt.Printf("child stdout: %q\n", out)
	err = exec.Command("/bin/sh", "-c", "exit 3").Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		fmt.Println("child exit status:", ee.ExitCode())
	} else {
		fmt.Println("child: unexpected", err)
	}
	cmd := exec.Command("/bin/cat")
	cmd.Stdin = strings.NewReader("through a pipe\n")
	out, err = cmd.Output()
	check(err)
	fmt.Printf("cat: %q\n", out)
}

func files() {
	dir, err := os.MkdirTemp("", "strata-go-")
	check(err)
	defer os.RemoveAll(dir)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			check(os.WriteFile(fmt.Sprintf("%s/f%d", dir, i), bytes.Repeat([]byte{byte('a' + i)}, 1000*(i+1)), 0o644))
		}(i)
	}
	wg.Wait()
	entries, err := os.ReadDir(dir)
	check(err)
	total := 0
	for _, e := range entries {
		info, err := e.Info()
		check(err)
		total += int(info.Size())
	}
	fmt.Println("files:", len(entries), "bytes:", total)
}

func main() {
	runtime.GOMAXPROCS(2)
	fmt.Println("GOMAXPROCS:", runtime.GOMAXPROCS(0))
	preemption()
	httpRoundTrips()
	signals()
	children()
	files()
	fmt.Println("done")
}
