/*
 * bench/rdkafka-perf: a librdkafka producer in C as a load generator, in the spirit of
 * librdkafka's rdkafka_performance (which its npm package does not ship). The JS binding's
 * per-message produce() call tops out near 115 MB/s here, which measures the binding, not the
 * broker; from C, librdkafka's own batching is the client.
 *
 * Built by bench/rdkafka-perf.ts against the librdkafka that @confluentinc/kafka-javascript
 * compiles from the npm registry:
 *   rdkafka-perf BOOTSTRAP TOPIC RECORDS SIZE ACKS COMPRESSION MAX_SECONDS [KEY=VALUE...]
 * Sends RECORDS values of SIZE bytes with no key (librdkafka's sticky partitioner), counts
 * delivery reports, and prints one JSON object: records, seconds, recordsPerSec, mbPerSec, errors,
 * the delivery latency (enqueue to delivery report) p50/p99/max in ms, and the process's own CPU
 * time (cpuSeconds, user + system). Exit 1 on any delivery error or when the records were not all
 * delivered within MAX_SECONDS.
 *   rdkafka-perf consume BOOTSTRAP TOPIC RECORDS MAX_SECONDS [KEY=VALUE...]
 * Reads RECORDS records of TOPIC, every partition assigned from its beginning (no group joined,
 * nothing committed), and prints the same summary without latencies. Exit 1 on a consumer
 * error or when fewer were read within MAX_SECONDS.
 */
#include "rdkafka.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* CPU time (user + system) this process has used, all of librdkafka's threads included. */
static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value, err, sizeof err) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "rdkafka-perf: %s=%s: %s\n", key, value, err);
    exit(2);
  }
}

/* Extra client properties, e.g. security.protocol=SSL ssl.ca.location=... (bench/tls.ts). */
static void set_extra(rd_kafka_conf_t *conf, int argc, char **argv, int first) {
  for (int i = first; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq) { fprintf(stderr, "rdkafka-perf: %s is not KEY=VALUE\n", argv[i]); exit(2); }
    *eq = '\0';
    set(conf, argv[i], eq + 1);
  }
}

static int consume(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: rdkafka-perf consume BOOTSTRAP TOPIC RECORDS MAX_SECONDS [KEY=VALUE...]\n");
    return 2;
  }
  const char *bootstrap = argv[2], *topic = argv[3];
  long long records = atoll(argv[4]);
  double max_seconds = atof(argv[5]);
  if (records <= 0 || max_seconds <= 0) {
    fprintf(stderr, "rdkafka-perf: bad RECORDS or MAX_SECONDS\n");
    return 2;
  }
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", bootstrap);
  set(conf, "client.id", "logline-bench-rdkafka-perf");
  set(conf, "group.id", "logline-bench-rdkafka-perf"); /* required by the API; never joined */
  set(conf, "enable.auto.commit", "false");
  set(conf, "enable.partition.eof", "false");
  set_extra(conf, argc, argv, 6);
  char err[512];
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "rdkafka-perf: %s\n", err);
    return 2;
  }
  const struct rd_kafka_metadata *md;
  rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
  rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, rkt, &md, 10000);
  if (e || md->topic_cnt != 1 || md->topics[0].err || md->topics[0].partition_cnt == 0) {
    fprintf(stderr, "rdkafka-perf: metadata for %s: %s\n", topic, rd_kafka_err2str(e ? e : md->topics[0].err));
    return 1;
  }
  rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(md->topics[0].partition_cnt);
  for (int i = 0; i < md->topics[0].partition_cnt; i++)
    rd_kafka_topic_partition_list_add(parts, topic, md->topics[0].partitions[i].id)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_metadata_destroy(md);
  rd_kafka_topic_destroy(rkt);
  rd_kafka_poll_set_consumer(rk);
  int64_t started = now_us();
  double cpu_started = cpu_seconds();
  if ((e = rd_kafka_assign(rk, parts))) {
    fprintf(stderr, "rdkafka-perf: assign: %s\n", rd_kafka_err2str(e));
    return 1;
  }
  rd_kafka_topic_partition_list_destroy(parts);
  int64_t deadline = started + (int64_t)(max_seconds * 1e6);
  long long consumed = 0, bytes = 0;
  while (consumed < records && errors == 0 && now_us() < deadline) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
    if (!m) continue;
    if (m->err) {
      if (errors++ == 0) snprintf(first_error, sizeof first_error, "%s", rd_kafka_message_errstr(m));
    } else {
      consumed++;
      bytes += (long long)m->len;
    }
    rd_kafka_message_destroy(m);
  }
  double seconds = (now_us() - started) / 1e6;
  double cpu = cpu_seconds() - cpu_started;
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  int ok = errors == 0 && consumed >= records;
  printf("{\"client\":\"librdkafka %s (C) consumer\",\"records\":%lld,\"seconds\":%.3f,\"recordsPerSec\":%.0f,\"mbPerSec\":%.2f,\"errors\":%lld,"
         "\"cpuSeconds\":%.3f%s%s%s}\n",
         rd_kafka_version_str(), consumed, seconds, consumed / seconds, bytes / seconds / 1e6, (long long)errors, cpu,
         ok ? "" : ",\"error\":\"", ok ? "" : (first_error[0] ? first_error : "not every record was read in time"), ok ? "" : "\"");
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "consume") == 0) return consume(argc, argv);
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
  set_extra(conf, argc, argv, 8);
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
  double cpu_started = cpu_seconds();
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
  double cpu = cpu_seconds() - cpu_started;
  rd_kafka_flush(rk, 5000);
  rd_kafka_destroy(rk);
  free(value);
  int ok = errors == 0 && delivered == records;
  printf("{\"client\":\"librdkafka %s (C)\",\"records\":%lld,\"seconds\":%.3f,\"recordsPerSec\":%.0f,\"mbPerSec\":%.2f,\"errors\":%lld,"
         "\"latencyMs\":{\"p50\":%.1f,\"p99\":%.1f,\"p99.9\":%.1f},\"cpuSeconds\":%.3f%s%s%s}\n",
         rd_kafka_version_str(), (long long)delivered, seconds, delivered / seconds, delivered * (double)size / seconds / 1e6,
         (long long)errors, percentile_ms(50), percentile_ms(99), percentile_ms(99.9), cpu,
         ok ? "" : ",\"error\":\"", ok ? "" : (first_error[0] ? first_error : "not every record was delivered in time"), ok ? "" : "\"");
  return ok ? 0 : 1;
}
