/*
 * bench/rdkafka-perf: a librdkafka producer in C as a load generator, in the spirit of
 * librdkafka's rdkafka_performance (which its npm package does not ship). The JS binding's
 * per-message produce() call tops out near 115 MB/s here, which measures the binding, not the
 * broker; from C, librdkafka's own batching is the client.
 *
 * Built by bench/rdkafka-perf.ts against the librdkafka that @confluentinc/kafka-javascript
 * compiles from the npm registry:
 *   rdkafka-perf BOOTSTRAP TOPIC RECORDS SIZE ACKS COMPRESSION MAX_SECONDS
 * Sends RECORDS values of SIZE bytes with no key (librdkafka's sticky partitioner), counts
 * delivery reports, and prints one JSON object: records, seconds, recordsPerSec, mbPerSec, errors
 * and the delivery latency (enqueue to delivery report) p50/p99/max in ms. Exit 1 on any delivery
 * error or when the records were not all delivered within MAX_SECONDS.
 */
#include "rdkafka.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LATENCY_BUCKETS 100000 /* 0.1 ms each, up to 10 s; slower deliveries land in the last */

static int64_t delivered = 0;
static int64_t errors = 0;
static char first_error[256] = "";
static uint32_t latency_hist[LATENCY_BUCKETS];

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  (void)opaque;
  int64_t waited_us = now_us() - (int64_t)(intptr_t)m->_private;
  int64_t bucket = waited_us / 100;
  if (bucket >= LATENCY_BUCKETS) bucket = LATENCY_BUCKETS - 1;
  if (bucket < 0) bucket = 0;
  latency_hist[bucket]++;
  if (m->err) {
    if (errors++ == 0) snprintf(first_error, sizeof first_error, "%s", rd_kafka_err2str(m->err));
  }
  delivered++;
}

static double percentile_ms(double p) {
  int64_t total = 0;
  for (int i = 0; i < LATENCY_BUCKETS; i++) total += latency_hist[i];
  if (total == 0) return 0;
  int64_t rank = (int64_t)(p / 100.0 * (double)total);
  if (rank >= total) rank = total - 1;
  int64_t seen = 0;
  for (int i = 0; i < LATENCY_BUCKETS; i++) {
    seen += latency_hist[i];
    if (seen > rank) return (i + 1) / 10.0;
  }
  return LATENCY_BUCKETS / 10.0;
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value, err, sizeof err) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "rdkafka-perf: %s=%s: %s\n", key, value, err);
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: rdkafka-perf BOOTSTRAP TOPIC RECORDS SIZE ACKS COMPRESSION MAX_SECONDS [KEY=VALUE...]\n");
    return 2;
  }
  const char *bootstrap = argv[1], *topic = argv[2], *acks = argv[5], *compression = argv[6];
  long long records = atoll(argv[3]);
  long size = atol(argv[4]);
  double max_seconds = atof(argv[7]);
  if (records <= 0 || size < 0 || size > 16 * 1024 * 1024 || max_seconds <= 0) {
    fprintf(stderr, "rdkafka-perf: bad RECORDS, SIZE or MAX_SECONDS\n");
    return 2;
  }
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", bootstrap);
  set(conf, "client.id", "logline-bench-rdkafka-perf");
  set(conf, "acks", acks);
  set(conf, "compression.codec", compression);
  set(conf, "linger.ms", "5");
  set(conf, "batch.size", "1000000");
  set(conf, "batch.num.messages", "10000");
  set(conf, "queue.buffering.max.messages", "500000");
  set(conf, "queue.buffering.max.kbytes", "1048576");
  set(conf, "enable.idempotence", "false");
  /* Extra client properties, e.g. security.protocol=SSL ssl.ca.location=... (bench/tls.ts). */
  for (int i = 8; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq) { fprintf(stderr, "rdkafka-perf: %s is not KEY=VALUE\n", argv[i]); return 2; }
    *eq = '\0';
    set(conf, argv[i], eq + 1);
  }
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  char err[512];
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "rdkafka-perf: %s\n", err);
    return 2;
  }
  /* One value for every record, never copied: librdkafka reads it while building each batch. */
  char *value = malloc(size > 0 ? size : 1);
  for (long i = 0; i < size; i++) value[i] = (char)(97 + ((i * 31 + (i >> 5)) % 26));

  int64_t started = now_us();
  int64_t deadline = started + (int64_t)(max_seconds * 1e6);
  long long sent = 0;
  while (sent < records && errors == 0 && now_us() < deadline) {
    rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_VALUE(value, (size_t)size),
                                              RD_KAFKA_V_OPAQUE((void *)(intptr_t)now_us()), RD_KAFKA_V_END);
    if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(rk, 1); /* let delivery reports drain the queue */
      continue;
    }
    if (e) {
      fprintf(stderr, "rdkafka-perf: produce: %s\n", rd_kafka_err2str(e));
      errors++;
      break;
    }
    sent++;
    if ((sent & 1023) == 0) rd_kafka_poll(rk, 0);
  }
  while (delivered < sent && errors == 0 && now_us() < deadline) rd_kafka_poll(rk, 10);
  double seconds = (now_us() - started) / 1e6;
  rd_kafka_flush(rk, 5000);
  rd_kafka_destroy(rk);
  free(value);
  int ok = errors == 0 && delivered == records;
  printf("{\"client\":\"librdkafka %s (C)\",\"records\":%lld,\"seconds\":%.3f,\"recordsPerSec\":%.0f,\"mbPerSec\":%.2f,\"errors\":%lld,"
         "\"latencyMs\":{\"p50\":%.1f,\"p99\":%.1f,\"p99.9\":%.1f}%s%s%s}\n",
         rd_kafka_version_str(), (long long)delivered, seconds, delivered / seconds, delivered * (double)size / seconds / 1e6,
         (long long)errors, percentile_ms(50), percentile_ms(99), percentile_ms(99.9),
         ok ? "" : ",\"error\":\"", ok ? "" : (first_error[0] ? first_error : "not every record was delivered in time"), ok ? "" : "\"");
  return ok ? 0 : 1;
}
