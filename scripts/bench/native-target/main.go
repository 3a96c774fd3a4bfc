// A native loopback target for the generator bench: GET /delay?ms=N answers 200 after N ms,
// costing almost no CPU, so every client is measured against the same server and none of
// the target's time is a JavaScript runtime's. It listens on 127.0.0.1 only, on the port
// given (0 picks one) and prints "listening <addr>" once it accepts connections.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	port := flag.Int("port", 0, "port on 127.0.0.1 (0 picks a free one)")
	flag.Parse()
	http.HandleFunc("/delay", func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil || ms < 0 || ms > 60_000 {
			http.Error(w, "ms must be an integer from 0 to 60000", http.StatusBadRequest)
			return
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		w.Header().Set("content-type", "text/plain")
		fmt.Fprint(w, "ok")
	})
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening %s\n", listener.Addr())
	if err := http.Serve(listener, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
