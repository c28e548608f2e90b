-- wrk script for the SNI passthrough bench.
--
-- wrk sends the URL's host as TLS SNI and Host header, and normally connects to whatever that
-- name resolves to. Here the URL host is backend.bench.test (so the SNI routes the connection),
-- but every connection goes to 127.0.0.1 on the URL's port: no /etc/hosts entry is needed.
wrk.resolve = function(host, service)
  wrk.addrs = wrk.lookup("127.0.0.1", service)
end

-- One machine-readable line after wrk's own report; latency figures are in microseconds.
done = function(summary, latency, requests)
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d duration_s=%.3f rps=%.2f bytes=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d " ..
    "err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d\n",
    summary.requests, secs, summary.requests / secs, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
