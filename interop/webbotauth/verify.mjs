// A site built on Cloudflare's published packages. Usage:
//
//	node verify.mjs BACKEND_URL
//
// It listens on two loopback ports (the crawl's two hosts) and on a control
// port, and prints them as one JSON line: {"sites":[A,B],"control":C}.
// Each request to a site is checked by two verifiers, then forwarded as it
// came (method, path, headers, Host) to BACKEND_URL, whose answer is sent
// back:
//   - "wba": web-bot-auth's verify (with the http-message-sig it bundles),
//   - "hms": http-message-sig 0.3.0's verifySignature under a strict
//     policy: ed25519, "@authority" and the Signature-Agent component of the
//     form the request uses covered, created, expires, keyid and tag present,
//     tag "web-bot-auth", no created later than now.
// Both take the key from the directory the Signature-Agent names, fetched
// over HTTPS once (NODE_EXTRA_CA_CERTS trusts a local CA), its Content-Digest
// and its own signature checked by http-message-sig 0.3.0; a key's ID is its
// thumbprint as web-bot-auth computes it. GET /log on the control port
// answers the records: host, method, url, the Signature-Agent's form and the
// signature's fields, each verifier's "ok" or its error, the backend's
// Interop-Verdict header (taken off the answer) and status.
import http from "node:http";
import { createHash } from "node:crypto";
import { verify as wbaVerify, jwkToKeyID, helpers } from "web-bot-auth";
import { verifierFromJWK } from "web-bot-auth/crypto";
import { verifySignature, component, webcrypto } from "http-message-sig";

const backend = new URL(process.argv[2]);

// CLOCK_BEHIND=S sets the verifiers' clock S seconds behind this machine's
// (a crawler whose clock is fast); the directory is checked on the real one.
const RealDate = Date;
const behind = Number(process.env.CLOCK_BEHIND || 0) * 1000;
if (behind) {
  globalThis.Date = class extends RealDate {
    constructor(...args) {
      super(...(args.length ? args : [RealDate.now() - behind]));
    }
    static now() {
      return RealDate.now() - behind;
    }
  };
}
const records = [];
const directories = new Map(); // URL -> Promise of Map keyid -> JWK

const message = (e) => (e && e.message ? e.message : String(e));

// The Signature-Agent's URL and form: a String ("https://…") or the
// Dictionary member keyed by the signature's label.
function agentOf(value, label) {
  if (!value) return { form: "none" };
  if (value.trimStart().startsWith('"')) {
    return { form: "string", url: JSON.parse(value.trim()) };
  }
  for (const member of value.split(",")) {
    const [k, v] = member.trim().split(/=(.*)/s);
    if (k === label && v) return { form: "dictionary", url: JSON.parse(v) };
  }
  return { form: "dictionary" };
}

async function fetchDirectory(url) {
  const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(5000) });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`directory ${url}: status ${res.status}`);
  const digest = "sha-256=:" + createHash("sha256").update(body).digest("base64") + ":";
  if (res.headers.get("content-digest") !== digest) throw new Error(`directory ${url}: Content-Digest does not match`);
  const keys = new Map();
  for (const jwk of JSON.parse(body.toString("utf8")).keys) {
    keys.set(await jwkToKeyID(jwk, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE), jwk);
  }
  const fields = [];
  res.headers.forEach((value, name) => fields.push({ name, value }));
  await verifySignature(
    { kind: "response", status: res.status, fields, request: { kind: "request", method: "GET", targetUri: url, fields: [] } },
    {
      policy: {
        algorithms: ["ed25519"],
        requiredComponents: [component("@authority", { req: true }), "content-digest"],
        requiredParameters: ["created", "expires", "keyid", "tag"],
        clockSkew: 0,
        now: Math.floor(RealDate.now() / 1000),
        validate: (s) => s.parameters.tag === "http-message-signatures-directory",
      },
      resolveVerifier: (c) => verifierOf(keys, c.parameters.keyid),
    },
  ).catch((e) => {
    throw new Error(`directory ${url}: its signature: ${message(e)}`);
  });
  return keys;
}

async function verifierOf(keys, keyid) {
  const jwk = keys.get(keyid);
  if (!jwk) throw new Error(`no key ${keyid} in the directory`);
  const key = await crypto.subtle.importKey("jwk", { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, { name: "Ed25519" }, false, ["verify"]);
  return webcrypto.verifier(key);
}

// directory is the keys of the directory at url, fetched once; a failure
// is each verifier's to report, if it gets that far.
function directory(url) {
  if (!directories.has(url)) {
    const keys = url ? fetchDirectory(url) : Promise.reject(new Error("no Signature-Agent URL"));
    keys.catch(() => {});
    directories.set(url, keys);
  }
  return directories.get(url);
}

async function check(req) {
  const target = `http://${req.headers.host}${req.url}`;
  const fields = [];
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const [name, value] = [req.rawHeaders[i].toLowerCase(), req.rawHeaders[i + 1]];
    fields.push({ name, value });
    if (name !== "host" && name !== "connection") headers.append(name, value);
  }
  const input = req.headers["signature-input"] || "";
  const label = (input.match(/^\s*([a-z*][a-z0-9_.*-]*)=/) || [])[1];
  const agent = agentOf(req.headers["signature-agent"], label);
  const rec = { host: req.headers.host, method: req.method, url: target, form: agent.form, input };
  rec.signature = req.headers["signature"];
  rec.agent = req.headers["signature-agent"];
  const keys = directory(agent.url);
  rec.wba = await wbaVerify(new Request(target, { method: req.method, headers }), async (data, signature, params) => {
    const jwk = (await keys).get(params.keyid);
    if (!jwk) throw new Error(`no key ${params.keyid} in the directory`);
    return (await verifierFromJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }))(data, signature, params);
  }).then(() => "ok", message);
  const agentComponent = agent.form === "dictionary" ? component("signature-agent", { key: label }) : "signature-agent";
  rec.hms = await verifySignature(
    { kind: "request", method: req.method, targetUri: target, fields },
    {
      label,
      policy: {
        algorithms: ["ed25519"],
        requiredComponents: ["@authority", agentComponent],
        requiredParameters: ["created", "expires", "keyid", "tag"],
        maxAge: 300,
        clockSkew: 0,
        validate: (s) => s.parameters.tag === "web-bot-auth" && s.parameters.expires * 1000 > Date.now(),
      },
      resolveVerifier: async (c) => verifierOf(await keys, c.parameters.keyid),
    },
  ).then(() => "ok", message);
  return rec;
}

function site(req, res) {
  check(req)
    .catch((e) => ({ host: req.headers.host, method: req.method, url: req.url, error: message(e) }))
    .then((rec) => {
      records.push(rec);
      const fwd = http.request(
        { host: backend.hostname, port: backend.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          rec.status = answer.statusCode;
          rec.ours = answer.headers["interop-verdict"];
          delete answer.headers["interop-verdict"];
          res.writeHead(answer.statusCode, answer.headers);
          answer.pipe(res);
        },
      );
      fwd.on("error", (e) => {
        rec.status = 502;
        res.writeHead(502).end(message(e));
      });
      req.pipe(fwd);
    });
}

function listen(handler) {
  return new Promise((resolve) => {
    const srv = http.createServer(handler).listen(0, "127.0.0.1", () => resolve(srv.address().port));
  });
}

const sites = [await listen(site), await listen(site)];
const control = await listen((req, res) => {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(records));
});
console.log(JSON.stringify({ sites, control }));
