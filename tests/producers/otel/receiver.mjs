// A stand-in for the OpenTelemetry Collector's file exporter: an OTLP/HTTP (JSON) receiver on
// 127.0.0.1 that writes each export request it is sent as one line, {"resourceSpans": [...]},
// in the order the requests arrive, and keeps them for `combined()`.
import http from 'node:http';
import fs from 'node:fs';

export async function startReceiver(outFile) {
  const bodies = [];
  fs.writeFileSync(outFile, '');
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      bodies.push(body);
      fs.appendFileSync(outFile, JSON.stringify(body) + '\n');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1/traces`,
    requests: () => bodies.length,
    // Every span received, as one export request would carry them.
    combined: () => ({ resourceSpans: bodies.flatMap((b) => b.resourceSpans) }),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
