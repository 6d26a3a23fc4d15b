/** The ingest load of the benchmarks: autocannon posting 2 KiB tool-results with fresh call_ids. */
import autocannon from 'autocannon';

function result2k(k: number): string {
  return JSON.stringify({ content: 'x'.repeat(1900), n: k, path: 'src/app.ts' });
}

/** `seq` numbers the call_ids, so runs against one session never repeat one. */
export async function driveToolResults(url: string, seq: { n: number }, connections: number, seconds: number) {
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => {
          const k = seq.n++;
          return { ...req, body: `{"call_id":"c${k}","name":"grep","result":${result2k(k)}}` };
        },
      },
    ],
  });
  return { rps: r.requests.average, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}
