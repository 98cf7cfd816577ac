"""Process-level policies every layer may use; the bottom layer beside `stream.contract`.

- :mod:`stream.platform.retry`: one classification of an exception (retry / rate limit /
  give up) and one backoff policy that honours Retry-After; client libraries register
  their transient errors (the runtime registers Kafka's: `stream.runtime.kafka_retry`);
- :mod:`stream.platform.heap`: glibc heap tuning and trimming for a long-running process.

Neither imports anything of ours, nor a third-party package.
"""
