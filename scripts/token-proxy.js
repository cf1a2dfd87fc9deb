// A reverse proxy that adds an access token to every request, so that the MCP conformance
// suite (which cannot send one) tests a server that requires tokens. It mints one HS256 JWT at
// start. Usage: node token-proxy.js LISTEN_PORT TARGET_PORT SECRET ISSUER AUDIENCE SUBJECT SCOPE
const http = require('http');
const crypto = require('crypto');
const [listen, target, secret, iss, aud, sub, scope] = process.argv.slice(2);
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
const now = Math.floor(Date.now() / 1000);
const unsigned = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ iss, aud, sub, scope, iat: now, exp: now + 3600 })}`;
const token = `${unsigned}.${crypto.createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const upstream = http.request(
    { host: '127.0.0.1', port: target, path: req.url, method: req.method, headers },
    (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); },
  );
  upstream.on('error', () => { if (!res.headersSent) res.writeHead(502); res.end(); });
  req.pipe(upstream);
  res.on('close', () => upstream.destroy());
}).listen(Number(listen), '127.0.0.1');
