// Package a2av1 speaks A2A v1.0 over JSON-RPC by translating it to and from A2A v0.3, which
// the a2a-go SDK speaks: method names, the A2A-Version header, parts and events without
// "kind", enum names (ROLE_USER, TASK_STATE_WORKING), stream results wrapped by type and
// error.data as a list. One codec serves both directions: Server puts a v1.0 front on a v0.3
// JSON-RPC handler; RequestToV1 and ResponseToV03 let a v0.3 client (Parley's A2A back end)
// talk to a v1.0 agent, a call and an answer or event at a time, and Transport does the same
// under a client that reads the HTTP answers itself (a2a-go's).
package a2av1

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Version is the protocol version of the A2A-Version header and of the agent card's
// supportedInterfaces.
const Version = "1.0"

// methods maps the v0.3 JSON-RPC methods to their v1.0 names.
var methods = map[string]string{
	"message/send":                        "SendMessage",
	"message/stream":                      "SendStreamingMessage",
	"tasks/get":                           "GetTask",
	"tasks/cancel":                        "CancelTask",
	"tasks/resubscribe":                   "SubscribeToTask",
	"tasks/pushNotificationConfig/set":    "CreateTaskPushNotificationConfig",
	"tasks/pushNotificationConfig/get":    "GetTaskPushNotificationConfig",
	"tasks/pushNotificationConfig/list":   "ListTaskPushNotificationConfigs",
	"tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
	"agent/getAuthenticatedExtendedCard":  "GetExtendedAgentCard",
}

// v03Methods maps the v1.0 names back.
var v03Methods = func() map[string]string {
	m := make(map[string]string, len(methods))
	for k, v := range methods {
		m[v] = k
	}
	return m
}()

// MethodV1 is the v1.0 name of a v0.3 method, "" when it has none.
func MethodV1(v03 string) string { return methods[v03] }

// MethodV03 is the v0.3 name of a v1.0 method, "" when it has none.
func MethodV03(v1 string) string { return v03Methods[v1] }

// streaming reports whether a method (of either version) answers with an event stream.
func streaming(method string) bool {
	switch method {
	case "message/stream", "tasks/resubscribe", "SendStreamingMessage", "SubscribeToTask":
		return true
	}
	return false
}

var (
	roles     = map[string]string{"user": "ROLE_USER", "agent": "ROLE_AGENT"}
	states    = map[string]string{"submitted": "TASK_STATE_SUBMITTED", "working": "TASK_STATE_WORKING", "input-required": "TASK_STATE_INPUT_REQUIRED", "completed": "TASK_STATE_COMPLETED", "canceled": "TASK_STATE_CANCELED", "failed": "TASK_STATE_FAILED", "rejected": "TASK_STATE_REJECTED", "auth-required": "TASK_STATE_AUTH_REQUIRED", "unknown": "TASK_STATE_UNSPECIFIED"}
	roles03   = invert(roles)
	states03  = invert(states)
	wrappers  = map[string]string{"task": "task", "message": "message", "status-update": "statusUpdate", "artifact-update": "artifactUpdate"}
	wrappers0 = invert(wrappers)
)

func invert(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[v] = k
	}
	return out
}

// obj is a JSON object being translated.
type obj = map[string]any

// ParamsToV1 translates the params of a v0.3 request.
func ParamsToV1(method string, params obj) obj {
	if params == nil {
		return nil
	}
	switch method {
	case "message/send", "message/stream":
		out := copyObj(params)
		if m, ok := params["message"].(obj); ok {
			out["message"] = toV1.message(m)
		}
		if c, ok := params["configuration"].(obj); ok {
			cfg := copyObj(c)
			if b, ok := c["blocking"].(bool); ok {
				delete(cfg, "blocking")
				if !b {
					cfg["returnImmediately"] = true
				}
			}
			if p, ok := c["pushNotificationConfig"]; ok {
				delete(cfg, "pushNotificationConfig")
				cfg["taskPushNotificationConfig"] = p
			}
			out["configuration"] = cfg
		}
		return out
	}
	return params
}

// ParamsToV03 translates the params of a v1.0 request.
func ParamsToV03(method string, params obj) obj {
	if params == nil {
		return nil
	}
	switch method {
	case "SendMessage", "SendStreamingMessage":
		out := copyObj(params)
		delete(out, "tenant")
		if m, ok := params["message"].(obj); ok {
			out["message"] = toV03.message(m)
		}
		if c, ok := params["configuration"].(obj); ok {
			cfg := copyObj(c)
			delete(cfg, "returnImmediately")
			if r, _ := c["returnImmediately"].(bool); r {
				cfg["blocking"] = false
			}
			if p, ok := c["taskPushNotificationConfig"]; ok {
				delete(cfg, "taskPushNotificationConfig")
				cfg["pushNotificationConfig"] = p
			}
			out["configuration"] = cfg
		}
		return out
	}
	out := copyObj(params)
	delete(out, "tenant")
	return out
}

// ResultToV1 translates the result of a v0.3 method.
func ResultToV1(method string, result any) any {
	o, ok := result.(obj)
	if !ok {
		return result
	}
	switch method {
	case "message/send", "message/stream", "tasks/resubscribe":
		// The result is one of the kinds, wrapped by its type in v1.0.
		kind, _ := o["kind"].(string)
		key, ok := wrappers[kind]
		if !ok {
			return result
		}
		return obj{key: eventToV1(o)}
	case "tasks/get", "tasks/cancel":
		return toV1.task(o)
	}
	return result
}

// ResultToV03 translates the result of a v1.0 method.
func ResultToV03(method string, result any) any {
	o, ok := result.(obj)
	if !ok {
		return result
	}
	switch method {
	case "SendMessage", "SendStreamingMessage", "SubscribeToTask":
		for key, v := range o {
			if kind, ok := wrappers0[key]; ok {
				if inner, ok := v.(obj); ok {
					return eventToV03(kind, inner)
				}
			}
		}
		return result
	case "GetTask", "CancelTask":
		return eventToV03("task", o)
	}
	return result
}

// eventToV1 translates a v0.3 task, message or event object (with its kind).
func eventToV1(o obj) obj {
	switch o["kind"] {
	case "task":
		return toV1.task(o)
	case "message":
		return toV1.message(o)
	}
	out := copyObj(o)
	delete(out, "kind")
	delete(out, "final")
	if s, ok := o["status"].(obj); ok {
		out["status"] = toV1.status(s)
	}
	if a, ok := o["artifact"].(obj); ok {
		out["artifact"] = toV1.artifact(a)
	}
	return out
}

// eventToV03 translates a v1.0 object of the given kind.
func eventToV03(kind string, o obj) obj {
	switch kind {
	case "task":
		return toV03.task(o)
	case "message":
		return toV03.message(o)
	}
	out := copyObj(o)
	out["kind"] = kind
	if s, ok := o["status"].(obj); ok {
		st := toV03.status(s)
		out["status"] = st
		// v1.0 has no final flag: a stream ends after a state the client must act on.
		switch st["state"] {
		case "completed", "canceled", "failed", "rejected", "input-required", "auth-required":
			out["final"] = true
		default:
			out["final"] = false
		}
	}
	if a, ok := o["artifact"].(obj); ok {
		out["artifact"] = toV03.artifact(a)
	}
	return out
}

// way is one direction of the translation: the names it gives roles and states, whether its
// objects carry their kind (v0.3 does), and how it writes a part.
type way struct {
	roles, states map[string]string
	kinds         bool
	part          func(obj) obj
}

var (
	toV1  = way{roles: roles, states: states, part: partToV1}
	toV03 = way{roles: roles03, states: states03, kinds: true, part: partToV03}
)

// kind sets or drops an object's kind.
func (w way) kind(o obj, kind string) {
	if w.kinds {
		o["kind"] = kind
	} else {
		delete(o, "kind")
	}
}

func (w way) task(o obj) obj {
	out := copyObj(o)
	w.kind(out, "task")
	if s, ok := o["status"].(obj); ok {
		out["status"] = w.status(s)
	}
	out["artifacts"] = mapList(o["artifacts"], w.artifact)
	out["history"] = mapList(o["history"], w.message)
	dropEmpty(out, "artifacts", "history")
	return out
}

func (w way) status(s obj) obj {
	out := copyObj(s)
	if st, ok := s["state"].(string); ok {
		out["state"] = rename(w.states, st)
	}
	if m, ok := s["message"].(obj); ok {
		out["message"] = w.message(m)
	}
	return out
}

func (w way) message(m obj) obj {
	out := copyObj(m)
	w.kind(out, "message")
	if r, ok := m["role"].(string); ok {
		out["role"] = rename(w.roles, r)
	}
	out["parts"] = mapList(m["parts"], w.part)
	return out
}

func (w way) artifact(a obj) obj {
	out := copyObj(a)
	out["parts"] = mapList(a["parts"], w.part)
	return out
}

// dataCompatKey marks a v0.3 DataPart that carries a v1.0 data value that is not an object.
const dataCompatKey = "data_part_compat"

func partToV1(p obj) obj {
	out := obj{}
	if md, ok := p["metadata"].(obj); ok && len(md) > 0 {
		out["metadata"] = md
	}
	switch p["kind"] {
	case "text":
		out["text"] = p["text"]
	case "data":
		d := p["data"]
		if md, _ := p["metadata"].(obj); md != nil && md[dataCompatKey] == true {
			if inner, ok := d.(obj); ok {
				d = inner["value"]
			}
			delete(md, dataCompatKey)
			if len(md) == 0 {
				delete(out, "metadata")
			}
		}
		out["data"] = d
	case "file":
		f, _ := p["file"].(obj)
		if b, ok := f["bytes"]; ok {
			out["raw"] = b
		} else {
			out["url"] = f["uri"]
		}
		if v, ok := f["mimeType"].(string); ok && v != "" {
			out["mediaType"] = v
		}
		if v, ok := f["name"].(string); ok && v != "" {
			out["filename"] = v
		}
	default:
		return copyObj(p)
	}
	return out
}

func partToV03(p obj) obj {
	out := obj{}
	if md, ok := p["metadata"].(obj); ok && len(md) > 0 {
		out["metadata"] = copyObj(md)
	}
	switch {
	case has(p, "text"):
		out["kind"], out["text"] = "text", p["text"]
	case has(p, "data"):
		out["kind"] = "data"
		if d, ok := p["data"].(obj); ok {
			out["data"] = d
		} else {
			md, _ := out["metadata"].(obj)
			if md == nil {
				md = obj{}
			}
			md[dataCompatKey] = true
			out["metadata"], out["data"] = md, obj{"value": p["data"]}
		}
	case has(p, "raw"), has(p, "url"):
		f := obj{}
		if has(p, "raw") {
			f["bytes"] = p["raw"]
		} else {
			f["uri"] = p["url"]
		}
		if v, ok := p["mediaType"].(string); ok && v != "" {
			f["mimeType"] = v
		}
		if v, ok := p["filename"].(string); ok && v != "" {
			f["name"] = v
		}
		out["kind"], out["file"] = "file", f
	default:
		// A part of a kind v0.3 has no word for: the client names it as it skips it.
		return copyObj(p)
	}
	return out
}

// ErrorToV1 translates a v0.3 JSON-RPC error: data becomes a list of details, with the
// ErrorInfo reason v1.0 names the error by.
func ErrorToV1(e obj) obj {
	out := copyObj(e)
	info := obj{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "domain": "a2a-protocol.org"}
	if r := reasons[code(e)]; r != "" {
		info["reason"] = r
	}
	if d, ok := e["data"].(obj); ok && len(d) > 0 {
		md := obj{}
		for k, v := range d {
			if s, ok := v.(string); ok {
				md[k] = s
			}
		}
		if len(md) > 0 {
			info["metadata"] = md
		}
	}
	out["data"] = []any{info}
	return out
}

// ErrorToV03 translates a v1.0 JSON-RPC error: its list of details goes under data.details,
// and an ErrorInfo's metadata (a detail, an error text) into data itself.
func ErrorToV03(e obj) obj {
	out := copyObj(e)
	list, ok := e["data"].([]any)
	if !ok {
		return out
	}
	d := obj{"details": list}
	for _, item := range list {
		if m, ok := item.(obj); ok {
			if md, ok := m["metadata"].(obj); ok {
				for k, v := range md {
					d[k] = v
				}
			}
		}
	}
	out["data"] = d
	return out
}

// reasons are the ErrorInfo reasons of A2A's error codes.
var reasons = map[int]string{
	-32001: "TASK_NOT_FOUND", -32002: "TASK_NOT_CANCELABLE", -32003: "PUSH_NOTIFICATION_NOT_SUPPORTED",
	-32004: "UNSUPPORTED_OPERATION", -32005: "CONTENT_TYPE_NOT_SUPPORTED", -32006: "INVALID_AGENT_RESPONSE",
	-32007: "EXTENDED_AGENT_CARD_NOT_CONFIGURED", -32008: "EXTENSION_SUPPORT_REQUIRED",
	-32009: "VERSION_NOT_SUPPORTED", -32602: "INVALID_PARAMS",
}

func rename(m map[string]string, s string) string {
	if v, ok := m[strings.TrimSpace(s)]; ok {
		return v
	}
	return s
}

func has(o obj, key string) bool {
	_, ok := o[key]
	return ok
}

func copyObj(o obj) obj {
	out := make(obj, len(o))
	for k, v := range o {
		out[k] = v
	}
	return out
}

func mapList(v any, f func(obj) obj) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for i, item := range list {
		if o, ok := item.(obj); ok {
			out[i] = f(o)
		} else {
			out[i] = item
		}
	}
	return out
}

func dropEmpty(o obj, keys ...string) {
	for _, k := range keys {
		if v, ok := o[k]; ok && (v == nil || isEmptyList(v)) {
			delete(o, k)
		}
	}
}

func isEmptyList(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) == 0
}

// code is a JSON-RPC error's code.
func code(e obj) int {
	switch c := e["code"].(type) {
	case json.Number:
		n, _ := c.Int64()
		return int(n)
	case float64:
		return int(c)
	}
	return 0
}

// decode reads JSON keeping numbers exact (ids, integers above 2^53).
func decode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}
