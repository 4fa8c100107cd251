package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// Client calls a kpool server. Errors the server returns come back as
// *kpool.Error with the server's code, message, details and fields.
type Client struct {
	BaseURL string // such as http://127.0.0.1:8080
	User    string // sent as X-User-Email (header mode)
	// Token is an API token, sent as Authorization: Bearer.
	Token string
	HTTP  *http.Client
	// OnWarning, when set, receives the text of each Warning header of a
	// successful answer (a field stored but not applied, say).
	OnWarning func(text string)
}

// NewClient returns a client of the server at baseURL acting as user.
func NewClient(baseURL, user string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), User: user, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Response is what do returns besides the decoded body.
type Response struct {
	Status int
	Header http.Header
}

// Do sends a request with a JSON body (nil for none) and decodes a JSON
// answer into out (nil to discard it).
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, header http.Header, body, out any) (*Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u := c.BaseURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	c.authorize(req)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("kpool server %s: %w", c.BaseURL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && (resp.StatusCode >= 400 || len(bytes.TrimSpace(data)) > 0) {
		// kpool answers JSON (errors too): this is something else.
		return r, &kpool.Error{Code: kpool.CodeUnavailable, Message: fmt.Sprintf("%s does not answer as a kpool server: check --server (or KPOOL_SERVER)", c.BaseURL),
			Details: fmt.Sprintf("%s %s answered HTTP %d with %s, not kpool's JSON", method, path, resp.StatusCode, orNone(ct))}
	}
	if resp.StatusCode >= 400 {
		var eb ErrorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			return r, &kpool.Error{Code: kpool.CodeInternal, Message: fmt.Sprintf("%s %s: HTTP %d", method, path, resp.StatusCode), Details: strings.TrimSpace(string(data))}
		}
		return r, &kpool.Error{Code: eb.Error.Code, Message: eb.Error.Message, Details: eb.Error.Details, Fields: eb.Error.Fields}
	}
	if c.OnWarning != nil {
		for _, h := range resp.Header.Values("Warning") {
			c.OnWarning(WarningText(h))
		}
	}
	if out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return r, fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
		}
	}
	return r, nil
}

// orNone is a content type for a message, saying so when there is none.
func orNone(ct string) string {
	if ct == "" {
		return "no content type"
	}
	return ct
}

// WarningText returns the text of a Warning header (`299 kpool "text"`), or
// the header as it is when it is not in that form.
func WarningText(h string) string {
	_, rest, ok := strings.Cut(h, " ")
	if !ok {
		return h
	}
	_, quoted, ok := strings.Cut(rest, " ")
	if !ok {
		return h
	}
	if text, err := strconv.Unquote(quoted); err == nil {
		return text
	}
	return h
}

// authorize says who the request is from: the client's user (header
// mode) or its token.
func (c *Client) authorize(req *http.Request) {
	if c.User != "" {
		req.Header.Set("X-User-Email", c.User)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
}
