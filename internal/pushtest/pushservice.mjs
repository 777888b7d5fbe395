// A push service for tests: it hands out browser-like subscriptions, takes Web Push messages
// (RFC 8030), checks the VAPID header (RFC 8292) with node's own crypto, decrypts the body
// (RFC 8291, aes128gcm) with the http_ece package, and lists what it got. It shares no code
// with Parley, so a test that passes here has been checked by a second implementation.
//
// It listens on 127.0.0.1 on a free port and prints {"origin":"http://127.0.0.1:PORT"} on
// one line. It stops when its stdin closes or on SIGTERM.
//
//   POST /subscriptions {"mode":"ok"|"gone"|"busy","fails":N}  -> a PushSubscription's JSON
//   POST /push/<id>                                            -> 201, 410, 503, 400 or 404
//   GET  /received                                             -> every push so far, in order

import crypto from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ece = require('http_ece');

const maxBody = 4096;
const day = 24 * 60 * 60;

let origin = '';
let nextID = 1;
const subscriptions = new Map(); // id -> {mode, fails, ecdh, auth, pushed}
const received = [];

const server = http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    // Keep a little more than the limit, enough to tell that it was passed.
    if (size <= 2 * maxBody) chunks.push(c);
  });
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    try {
      route(req, res, body, size);
    } catch (err) {
      answer(res, 500, { error: String(err && err.stack || err) });
    }
  });
});

function route(req, res, body, size) {
  const path = new URL(req.url, origin).pathname;
  if (req.method === 'POST' && path === '/subscriptions') return subscribe(res, body);
  if (req.method === 'POST' && path.startsWith('/push/')) return push(req, res, path.slice(6), body, size);
  if (req.method === 'GET' && path === '/received') return answer(res, 200, received);
  answer(res, 404, { error: 'no route for ' + req.method + ' ' + path });
}

function answer(res, status, value) {
  const text = value === undefined ? '' : JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(text);
}

// subscribe makes a subscription with its own key pair and auth secret, as a browser would.
function subscribe(res, body) {
  let req;
  try {
    req = JSON.parse(body.toString('utf8') || '{}');
  } catch (err) {
    return answer(res, 400, { error: 'body is not JSON: ' + err.message });
  }
  const mode = req.mode || 'ok';
  if (!['ok', 'gone', 'busy'].includes(mode)) {
    return answer(res, 400, { error: 'mode must be ok, gone or busy, not ' + JSON.stringify(mode) });
  }
  const fails = req.fails ?? 0;
  if (!Number.isInteger(fails) || fails < 0) {
    return answer(res, 400, { error: 'fails must be a non-negative integer' });
  }
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = crypto.randomBytes(16);
  const id = String(nextID++);
  subscriptions.set(id, { mode, fails, ecdh, auth, pushed: 0 });
  answer(res, 201, {
    endpoint: origin + '/push/' + id,
    expirationTime: null,
    keys: {
      p256dh: ecdh.getPublicKey().toString('base64url'),
      auth: auth.toString('base64url'),
    },
  });
}

// push checks one message, records it and answers: 400 when a check failed, 404 for an
// unknown subscription, else as the subscription's mode says. Only pushes that pass the
// checks count towards a busy subscription's fails.
function push(req, res, id, body, size) {
  const rec = {
    subscription: origin + '/push/' + id,
    status: 0,
    ttl: -1,
    k: '',
    sub: '',
    aud: '',
    exp: 0,
    payload: null,
    error: '',
    bytes: size,
    urgency: req.headers['urgency'] || '',
  };
  const errors = [];
  const s = subscriptions.get(id);
  if (!s) {
    errors.push('no subscription ' + JSON.stringify(id));
  } else {
    checkHeaders(req, rec, errors);
    checkVAPID(req.headers['authorization'], rec, errors);
    if (size > maxBody) errors.push('body is ' + size + ' bytes, more than ' + maxBody);
    else decryptBody(body, s, rec, errors);
  }
  rec.error = errors.join('; ');
  if (!s) rec.status = 404;
  else if (errors.length > 0) rec.status = 400;
  else if (s.mode === 'gone') rec.status = 410;
  else if (s.mode === 'busy' && s.pushed < s.fails) rec.status = 503;
  else rec.status = 201;
  if (s && errors.length === 0) s.pushed++;
  received.push(rec);
  answer(res, rec.status, rec.error ? { error: rec.error } : undefined);
}

function checkHeaders(req, rec, errors) {
  const enc = req.headers['content-encoding'];
  if (enc !== 'aes128gcm') errors.push('Content-Encoding is ' + JSON.stringify(enc ?? '') + ', not aes128gcm');
  const ttl = req.headers['ttl'];
  if (ttl === undefined) errors.push('no TTL header');
  else if (!/^[0-9]+$/.test(ttl)) errors.push('TTL ' + JSON.stringify(ttl) + ' is not a non-negative integer');
  else rec.ttl = Number(ttl);
}

// checkVAPID checks "Authorization: vapid t=<JWT>, k=<key>" (RFC 8292).
function checkVAPID(header, rec, errors) {
  if (!header) return errors.push('no Authorization header');
  const m = /^vapid\s+(.*)$/i.exec(header);
  if (!m) return errors.push('Authorization is not "vapid t=..., k=...": ' + JSON.stringify(header));
  const params = {};
  for (const part of m[1].split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) params[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  const t = params.t, k = params.k;
  if (!t) errors.push('Authorization has no t=');
  if (!k) errors.push('Authorization has no k=');
  if (!t || !k) return;
  rec.k = k;

  const parts = t.split('.');
  if (parts.length !== 3) return errors.push('the JWT has ' + parts.length + ' parts, not 3');
  let head, claims;
  try {
    head = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch (err) {
    return errors.push('the JWT does not decode: ' + err.message);
  }
  rec.sub = typeof claims.sub === 'string' ? claims.sub : '';
  rec.aud = typeof claims.aud === 'string' ? claims.aud : '';
  rec.exp = typeof claims.exp === 'number' ? claims.exp : 0;

  if (head.alg !== 'ES256') errors.push('the JWT alg is ' + JSON.stringify(head.alg) + ', not ES256');
  const raw = Buffer.from(k, 'base64url');
  if (raw.length !== 65 || raw[0] !== 4) {
    errors.push('k is not an uncompressed P-256 point (' + raw.length + ' bytes)');
  } else {
    let key;
    try {
      key = crypto.createPublicKey({
        format: 'jwk',
        key: {
          kty: 'EC',
          crv: 'P-256',
          x: raw.subarray(1, 33).toString('base64url'),
          y: raw.subarray(33, 65).toString('base64url'),
        },
      });
    } catch (err) {
      errors.push('k is not a P-256 public key: ' + err.message);
    }
    if (key) {
      const signed = Buffer.from(parts[0] + '.' + parts[1]);
      const sig = Buffer.from(parts[2], 'base64url');
      let ok = false;
      try {
        ok = sig.length === 64 && crypto.verify('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, sig);
      } catch (err) {
        errors.push('the JWT signature does not verify: ' + err.message);
      }
      if (!ok) errors.push('the JWT signature does not match k');
    }
  }

  if (claims.aud !== origin) errors.push('aud is ' + JSON.stringify(claims.aud) + ', not ' + JSON.stringify(origin));
  const now = Math.floor(Date.now() / 1000);
  if (typeof claims.exp !== 'number') errors.push('exp is not a number');
  else if (claims.exp <= now) errors.push('exp ' + claims.exp + ' is not after now (' + now + ')');
  else if (claims.exp > now + day) errors.push('exp ' + claims.exp + ' is more than 24 h from now (' + now + ')');
  if (typeof claims.sub !== 'string' || !(claims.sub.startsWith('mailto:') || claims.sub.startsWith('https:'))) {
    errors.push('sub ' + JSON.stringify(claims.sub) + ' starts with neither mailto: nor https:');
  }
}

// decryptBody decrypts an aes128gcm body to the subscription's keys and parses it as JSON.
function decryptBody(body, s, rec, errors) {
  // RFC 8291 section 4: the key id is the sender's 65-byte public key, and there is one record.
  if (body.length < 21) return errors.push('body is ' + body.length + ' bytes, shorter than the aes128gcm header');
  const rs = body.readUInt32BE(16);
  const idlen = body[20];
  if (idlen !== 65) errors.push('the aes128gcm key id is ' + idlen + ' bytes, not 65');
  if (body.length - 21 - idlen > rs) errors.push('body holds more than one record (rs ' + rs + ')');
  let plain;
  try {
    plain = ece.decrypt(body, { version: 'aes128gcm', privateKey: s.ecdh, authSecret: s.auth });
  } catch (err) {
    return errors.push('decrypt: ' + err.message);
  }
  try {
    rec.payload = JSON.parse(plain.toString('utf8'));
  } catch (err) {
    errors.push('payload is not JSON: ' + err.message);
  }
}

function stop() {
  server.close();
  process.exit(0);
}

process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();

server.listen(0, '127.0.0.1', () => {
  origin = 'http://127.0.0.1:' + server.address().port;
  process.stdout.write(JSON.stringify({ origin }) + '\n');
});
