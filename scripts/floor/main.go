// Command floor is the yardstick of scripts/floor.sh: a bare net/http
// server that answers the REST read requests with the very bytes identityd
// answers them with, and does nothing else. Whatever rate it reaches on a
// machine is the most any handler writing those responses through net/http
// can reach there; identityd's rate is measured against it.
//
// At start it asks identityd (-upstream, with the bearer key in the
// environment variable FLOOR_KEY) once for each sample path and keeps the
// status, the headers identityd set (all but Date and Content-Length, which
// net/http adds to every response alike) and the body. It then serves
//
//	GET .../users/{id}/attributes  the -attributes sample
//	GET ...?query                  the -search sample
//	GET anything else              the -user sample
//
// on -addr (127.0.0.1:0 by default), setting the headers one by one with
// Header.Set and writing the body, as a plain handler would. It prints
// "listening ADDR" on standard output once it accepts connections.
//
// Usage:
//
//	FLOOR_KEY=idk_... floor -upstream http://127.0.0.1:PORT -user PATH -attributes PATH -search PATH
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// sample is one response to replay.
type sample struct {
	status int
	header [][2]string // name and value, in a stable order
	body   []byte
}

// serve writes the sample.
func (s *sample) serve(w http.ResponseWriter) {
	h := w.Header()
	for _, kv := range s.header {
		h.Set(kv[0], kv[1])
	}
	w.WriteHeader(s.status)
	w.Write(s.body)
}

// fetch asks the upstream for path with the key and keeps the answer.
func fetch(client *http.Client, upstream, key, path string) (*sample, error) {
	req, err := http.NewRequest(http.MethodGet, upstream+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %s", path, resp.StatusCode, body)
	}
	s := &sample{status: resp.StatusCode, body: body}
	for name, values := range resp.Header {
		if name == "Date" || name == "Content-Length" {
			continue
		}
		for _, v := range values {
			s.header = append(s.header, [2]string{name, v})
		}
	}
	return s, nil
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("floor: ")
	addr := flag.String("addr", "127.0.0.1:0", "the `ADDRESS` to listen on")
	upstream := flag.String("upstream", "", "the base `URL` of identityd, such as http://127.0.0.1:8080")
	userPath := flag.String("user", "", "the `PATH` of a GET user to replay")
	attributesPath := flag.String("attributes", "", "the `PATH` of a GET attributes to replay")
	searchPath := flag.String("search", "", "the `PATH` of a user search to replay")
	flag.Parse()
	key := os.Getenv("FLOOR_KEY")
	if *upstream == "" || *userPath == "" || *attributesPath == "" || *searchPath == "" || key == "" {
		log.Fatal("-upstream, -user, -attributes, -search and FLOOR_KEY are required")
	}

	client := &http.Client{Timeout: 10 * time.Second}
	var user, attributes, search *sample
	var err error
	for _, f := range []struct {
		dst  **sample
		path string
	}{{&user, *userPath}, {&attributes, *attributesPath}, {&search, *searchPath}} {
		if *f.dst, err = fetch(client, *upstream, key, f.path); err != nil {
			log.Fatal(err)
		}
	}

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.RawQuery != "":
			search.serve(w)
		case strings.HasSuffix(r.URL.Path, "/attributes"):
			attributes.serve(w)
		default:
			user.serve(w)
		}
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening %s\n", ln.Addr())
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
