package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// JSON returns a reply of status whose body is v in JSON, of content type
// contentType (clouds differ in its parameters). A v that does not encode
// is the emulator's bug: the reply is then a plain 500 that says why.
func JSON(status int, contentType string, v any) *Reply {
	b, err := json.Marshal(v)
	if err != nil {
		rep := Text(http.StatusInternalServerError)
		rep.Body = fmt.Appendf(nil, "kpool cloudsim: encoding the response: %v\n", err)
		return rep
	}
	rep := NewReply(status)
	rep.Body = b
	rep.Header.Set("Content-Type", contentType)
	return rep
}

// CloneJSON deep-copies v through its JSON form: the clouds' SDK types an
// emulator keeps its state in have no copy of their own. nil gives a new
// zero T. A v that does not round-trip is the emulator's bug: it panics.
func CloneJSON[T any](v *T) *T {
	out := new(T)
	if v == nil {
		return out
	}
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		panic(fmt.Sprintf("sim: copying a %T: %v", v, err))
	}
	return out
}
