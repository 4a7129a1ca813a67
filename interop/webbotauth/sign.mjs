// Requests signed by Cloudflare's web-bot-auth package. Usage:
//
//	node sign.mjs JOBS.json
//
// JOBS.json is an array of {name, send, sign, jwk, agent, created, expires,
// components}:
// each job's request is a GET of the URL send. With a jwk (a private
// Ed25519 JWK) it carries Signature-Agent: "agent" and the signature that
// web-bot-auth's signatureHeaders makes for the URL sign (send when absent),
// created and expires in seconds since the epoch, covering components
// (web-bot-auth's default when absent). Without a jwk it is sent
// unsigned. One JSON line per job: {name, status} or {name, error}.
import { readFileSync } from "node:fs";
import { signatureHeaders } from "web-bot-auth";
import { signerFromJWK } from "web-bot-auth/crypto";

for (const job of JSON.parse(readFileSync(process.argv[2], "utf8"))) {
  try {
    const headers = {};
    if (job.jwk) {
      headers["Signature-Agent"] = JSON.stringify(job.agent);
      const signed = await signatureHeaders(new Request(job.sign || job.send, { headers }), await signerFromJWK(job.jwk), {
        created: new Date(job.created * 1000),
        expires: new Date(job.expires * 1000),
        components: job.components,
      });
      Object.assign(headers, signed);
    }
    const res = await fetch(job.send, { headers, redirect: "manual", signal: AbortSignal.timeout(10000) });
    await res.arrayBuffer();
    console.log(JSON.stringify({ name: job.name, status: res.status }));
  } catch (e) {
    console.log(JSON.stringify({ name: job.name, error: String(e && e.message ? e.message : e) }));
  }
}
