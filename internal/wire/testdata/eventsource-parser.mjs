// The reference for wire.Reader (sse_test.go): the eventsource-parser package reads the
// streams the test sends, one JSON line each on stdin ({"chunks": [base64, ...]}), and
// answers one line each ({"events": [{"type", "data", "id", "retry"}]}, every string in
// base64). Where it differs from the WHATWG's rules in a known way, this file evens that out,
// and only that, where it says so.
import {createParser} from 'eventsource-parser'
import {createInterface} from 'node:readline'

// Bytes go in as text one character a byte (latin1), and text comes back out the same way,
// so that both readers are compared on the same bytes: the rules are about characters that
// are all ASCII, and the Reader passes other bytes on as they came (it does not decode
// UTF-8). The parser looks for the byte-order mark as those same three characters
// (U+00EF U+00BB U+00BF), which is what it gets here.
const text = (b64) => Buffer.from(b64, 'base64').toString('latin1')
const bytes = (s) => (s === undefined ? null : Buffer.from(s, 'latin1').toString('base64'))

function read(chunks) {
  const events = []
  let retry = null
  const parser = createParser({
    onEvent: (e) => events.push({type: bytes(e.event), data: bytes(e.data), id: bytes(e.id), retry}),
    onRetry: (ms) => {
      retry = ms
    },
  })
  let input = chunks.map(text)
  // The parser looks for the byte-order mark in the first chunk it is fed only, so that
  // chunk holds at least the mark's three bytes; an empty chunk is not fed.
  while (input.length > 1 && input[0].length < 3) {
    input = [input[0] + input[1], ...input.slice(2)]
  }
  input = input.filter((c) => c !== '')
  for (const c of input) parser.feed(c)
  // The parser has no end of input: it keeps a line whose end it has not seen, and a CR
  // (until it knows whether a LF follows, both one line end), for the next chunk. A LF
  // after the last byte, unless that is a LF, lets it read them: a CR then a LF is the
  // same one line end as a CR, and a line without end dispatches no event either way.
  const last = input.length ? input[input.length - 1] : ''
  if (last !== '' && !last.endsWith('\n')) parser.feed('\n')
  return events
}

const lines = createInterface({input: process.stdin, crlfDelay: Infinity})
for await (const line of lines) {
  const {chunks} = JSON.parse(line)
  process.stdout.write(JSON.stringify({events: read(chunks)}) + '\n')
}
