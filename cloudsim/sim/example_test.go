package sim_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// toy is a small emulator on the engine, with a wire protocol of its own,
// as an EKS or GKE emulator would be built:
//
//	PUT    /pools/{name}?nodes=N  start an operation to N nodes: 201 (new) or 200; 409 while one runs
//	GET    /pools/{name}          {"name","nodes","state"}; 404
//	DELETE /pools/{name}          202; the pool goes when its operation ends
//
// Errors are {"error":"..."}: 401 without a token, then the engine's 429
// (with Retry-After), 413 for a body too large and injected 500 and 503
// in the toy's words (toyCodec).
type toy struct {
	*sim.Engine
	pools map[string]*toyPool // guarded by the engine's lock
}

type toyPool struct {
	name  string
	nodes int
	state string
	op    *sim.Operation
}

func newToy(o sim.Options) *toy {
	t := &toy{pools: map[string]*toyPool{}}
	routes := sim.NewRouter(toyStatus(http.StatusNotFound, "no such path"), toyStatus(http.StatusMethodNotAllowed, "no such method"))
	routes.Handle("GET /pools/{name}", t.get)
	routes.Handle("PUT /pools/{name}", t.put)
	routes.Handle("DELETE /pools/{name}", t.delete)
	t.Engine = sim.New(o, sim.Protocol{Authenticate: authenticate, Codec: toyCodec{}, Routes: routes.Serve})
	return t
}

func authenticate(r *sim.Request) *sim.Reply {
	if r.HTTP.Header.Get("Authorization") == "" {
		return toyError(http.StatusUnauthorized, "no token")
	}
	return nil
}

// toyCodec words the engine's answers as the toy's errors.
type toyCodec struct{}

func (toyCodec) Throttled(*sim.Request, int) *sim.Reply {
	return toyError(http.StatusTooManyRequests, "slow down")
}

func (toyCodec) BodyTooLarge(*sim.Request) *sim.Reply {
	return toyError(http.StatusRequestEntityTooLarge, "too large")
}

func (toyCodec) BadBody(_ *sim.Request, err error) *sim.Reply {
	return toyError(http.StatusBadRequest, err.Error())
}

func (toyCodec) Fault(_ *sim.Request, kind string) *sim.Reply {
	if kind == sim.Fault503 {
		return toyError(http.StatusServiceUnavailable, "injected")
	}
	return toyError(http.StatusInternalServerError, "injected")
}

func (t *toy) get(r *sim.Request) *sim.Reply {
	p := t.pools[r.HTTP.PathValue("name")]
	if p == nil {
		return toyError(http.StatusNotFound, "no such pool")
	}
	return toyJSON(http.StatusOK, p.view(r.Now))
}

func (t *toy) put(r *sim.Request) *sim.Reply {
	name := r.HTTP.PathValue("name")
	n, err := strconv.Atoi(r.HTTP.URL.Query().Get("nodes"))
	if err != nil || n < 0 {
		return toyError(http.StatusBadRequest, "nodes must be a count")
	}
	p := t.pools[name]
	created := p == nil
	if created {
		p = &toyPool{name: name}
		t.pools[name] = p
	} else if p.op != nil {
		return toyError(http.StatusConflict, "an operation is running")
	}
	kind, status := "Scaling", http.StatusOK
	if created {
		kind, status = "Creating", http.StatusCreated
	}
	t.start(r, p, kind, n)
	rep := toyJSON(status, p.view(r.Now))
	rep.Created = created
	return rep
}

func (t *toy) delete(r *sim.Request) *sim.Reply {
	p := t.pools[r.HTTP.PathValue("name")]
	if p == nil {
		return sim.NewReply(http.StatusNoContent)
	}
	if p.op != nil {
		return toyError(http.StatusConflict, "an operation is running")
	}
	t.start(r, p, "Deleting", 0)
	return sim.NewReply(http.StatusAccepted)
}

// start starts an operation on p to n nodes; its end applies it.
func (t *toy) start(r *sim.Request, p *toyPool, kind string, n int) {
	p.op = r.Start(kind, p.nodes, n, 0)
	p.op.Done = func(o *sim.Operation) {
		p.nodes, p.op, p.state = o.To, nil, "Ready"
		switch {
		case o.Fails:
			p.state = "Failed"
		case o.Kind == "Deleting":
			delete(t.pools, p.name)
		}
	}
}

func (p *toyPool) view(now time.Time) map[string]any {
	if p.op != nil {
		return map[string]any{"name": p.name, "nodes": p.op.Nodes(now), "state": p.op.Kind}
	}
	return map[string]any{"name": p.name, "nodes": p.nodes, "state": p.state}
}

func toyJSON(status int, v any) *sim.Reply { return sim.JSON(status, "application/json", v) }

func toyError(status int, msg string) *sim.Reply {
	return toyJSON(status, map[string]string{"error": msg})
}

// toyStatus is a Handler that answers msg with status.
func toyStatus(status int, msg string) sim.Handler {
	return func(*sim.Request) *sim.Reply { return toyError(status, msg) }
}

// An emulator is a handler on the engine; a test drives its clock.
func Example() {
	clock := sim.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	emu := newToy(sim.Options{Clock: clock, OperationTime: 10 * time.Second, NodeTime: 5 * time.Second})
	do := func(method, target string) {
		req := httptest.NewRequest(method, target, nil)
		req.Header.Set("Authorization", "Bearer demo")
		rec := httptest.NewRecorder()
		emu.ServeHTTP(rec, req)
		fmt.Println(rec.Code, rec.Body.String())
	}
	do(http.MethodPut, "/pools/web?nodes=2") // 10 s plus 5 s per node
	clock.Advance(5 * time.Second)
	do(http.MethodGet, "/pools/web")
	clock.Advance(15 * time.Second)
	do(http.MethodGet, "/pools/web")
	fmt.Println(len(emu.Calls()), "calls")
	// Output:
	// 201 {"name":"web","nodes":0,"state":"Creating"}
	// 200 {"name":"web","nodes":1,"state":"Creating"}
	// 200 {"name":"web","nodes":2,"state":"Ready"}
	// 3 calls
}
