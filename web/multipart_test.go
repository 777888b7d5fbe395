package web

import (
	"bytes"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// parts parses a multipart body with boundary "XyZ", through tolerantParts or not: its
// fields, and each file's name and bytes.
func parts(body []byte, tolerant bool) (fields map[string][]string, files map[string]string, err error) {
	req, _ := http.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "multipart/form-data; boundary=XyZ")
	if tolerant {
		tolerantParts(req)
	}
	if err := req.ParseMultipartForm(64 << 20); err != nil {
		return nil, nil, err
	}
	files = map[string]string{}
	for name, fhs := range req.MultipartForm.File {
		for _, fh := range fhs {
			f, _ := fh.Open()
			b, _ := io.ReadAll(f)
			files[name+"/"+fh.Filename] = string(b)
		}
	}
	return req.MultipartForm.Value, files, nil
}

// The filter changes nothing the parser reads but the control bytes of part headers: a
// body that parses without it parses the same with it, whatever the content holds (lines
// that look like delimiters, control bytes, a CRLF split across the filter's buffer).
func FuzzTolerantParts(f *testing.F) {
	f.Add([]byte("bin\x01\x02\x1b data"), uint16(0), false)
	f.Add([]byte("line1\r\n--XyZnot-a-boundary\r\nbin\x01\x02 data\r\n\r\ntail"), uint16(0), false)
	f.Add([]byte("--XyZ \t\r\nx\x01"), uint16(3), true)
	f.Add([]byte("a"), uint16(65535), false) // the field's CRLF split between two reads
	f.Add([]byte("\n--XyZ\n\x01"), uint16(65534), true)
	f.Fuzz(func(t *testing.T, content []byte, pad uint16, lf bool) {
		nl := "\r\n"
		if lf {
			nl = "\n"
		}
		body := "--XyZ" + nl + `Content-Disposition: form-data; name="text"` + nl + nl + strings.Repeat("a", int(pad)) + nl +
			"--XyZ" + nl + `Content-Disposition: form-data; name="f"; filename="x.bin"` + nl + "Content-Type: application/octet-stream" + nl + nl +
			string(content) + nl + "--XyZ--" + nl
		wantFields, wantFiles, err := parts([]byte(body), false)
		if err != nil {
			return // not a body the parser takes: nothing to keep the same
		}
		gotFields, gotFiles, err := parts([]byte(body), true)
		if err != nil {
			t.Fatalf("the filter broke a body the parser takes: %v", err)
		}
		if !reflect.DeepEqual(gotFields, wantFields) || !reflect.DeepEqual(gotFiles, wantFiles) {
			t.Fatalf("the filter changed the form:\n got %q %q\nwant %q %q", gotFields, gotFiles, wantFields, wantFiles)
		}
	})
}

// A file name with a control byte is read, cleaned of it, wherever the part starts: after a
// field whose CRLF the filter reads in two pieces too.
func TestTolerantParts_ControlByteInAFileName(t *testing.T) {
	for _, pad := range []int{0, 65534, 65535, 65536} {
		body := "--XyZ\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\n" + strings.Repeat("a", pad) + "\r\n" +
			"--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\x01b.txt\"\r\n\x01\r\nhello\x01\r\n--XyZ--\r\n"
		if _, _, err := parts([]byte(body), false); err == nil {
			t.Fatal("the parser takes a control byte in a header now: the filter may go")
		}
		fields, files, err := parts([]byte(body), true)
		if err != nil {
			t.Fatalf("pad %d: %v", pad, err)
		}
		if len(fields["text"]) != 1 || len(fields["text"][0]) != pad || files["f/ab.txt"] != "hello\x01" {
			t.Errorf("pad %d: fields of %d bytes, files %q", pad, len(fields["text"][0]), files)
		}
	}
}
