package wire

import "io"

// NewReaderSize is NewReader with a buffer of size bytes (at least 3), for tests of lines
// longer than the buffer.
func NewReaderSize(r io.Reader, max, size int) *Reader { return newReader(r, max, size) }
