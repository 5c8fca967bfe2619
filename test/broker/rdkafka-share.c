/*
 * test/broker/rdkafka-share: librdkafka's share consumer (its KIP-932 preview C API) as a test
 * driver, built by test/broker/rdkafka-share.test.ts against the librdkafka that
 * @confluentinc/kafka-javascript compiles (as bench/rdkafka-perf.c is).
 *   rdkafka-share BOOTSTRAP GROUP TOPIC [KEY=VALUE...]
 * Subscribes in explicit acknowledgement mode and polls. Each record is printed as one line
 *   R <partition> <offset> <delivery count> <value>
 * and acknowledged with `action` (accept, release, reject; hold leaves it unacknowledged), or
 * with `other` when `on=<value>` is set and the value differs. After `max` records (or `seconds`)
 * it commits (commit=sync|async|none), prints "DONE <count>" and closes; action=hold prints
 * "HELD <count>" after `max` records and waits to be killed. Options starting with "rd." go to
 * librdkafka (rd.debug=cgrp,fetch). stdout is line-buffered for the test reading it.
 */
#include "rdkafka.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *opt(int argc, char **argv, const char *key, const char *dflt) {
  size_t n = strlen(key);
  for (int i = 4; i < argc; i++)
    if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=') return argv[i] + n + 1;
  return dflt;
}

static rd_kafka_share_AcknowledgeType_t ack_type(const char *name) {
  if (strcmp(name, "release") == 0) return RD_KAFKA_SHARE_ACKNOWLEDGE_TYPE_RELEASE;
  if (strcmp(name, "reject") == 0) return RD_KAFKA_SHARE_ACKNOWLEDGE_TYPE_REJECT;
  return RD_KAFKA_SHARE_ACKNOWLEDGE_TYPE_ACCEPT;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: rdkafka-share BOOTSTRAP GROUP TOPIC [KEY=VALUE...]\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *action = opt(argc, argv, "action", "accept");
  const char *other = opt(argc, argv, "other", "accept");
  const char *on = opt(argc, argv, "on", NULL);
  const char *commit = opt(argc, argv, "commit", "sync");
  long max = atol(opt(argc, argv, "max", "1000000"));
  long seconds = atol(opt(argc, argv, "seconds", "30"));
  int hold = strcmp(action, "hold") == 0;
  char errstr[512];

  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK ||
      rd_kafka_conf_set(conf, "group.id", argv[2], errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK ||
      rd_kafka_conf_set(conf, "share.acknowledgement.mode", "explicit", errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "config: %s\n", errstr);
    return 2;
  }
  for (int i = 4; i < argc; i++) {
    if (strncmp(argv[i], "rd.", 3) != 0) continue;
    char *kv = strdup(argv[i] + 3);
    char *eq = strchr(kv, '=');
    if (!eq) continue;
    *eq = 0;
    if (rd_kafka_conf_set(conf, kv, eq + 1, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
      fprintf(stderr, "config %s: %s\n", kv, errstr);
      return 2;
    }
    free(kv);
  }
  rd_kafka_share_t *rkshare = rd_kafka_share_consumer_new(conf, errstr, sizeof(errstr));
  if (!rkshare) {
    fprintf(stderr, "share consumer: %s\n", errstr);
    return 1;
  }
  rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, argv[3], RD_KAFKA_PARTITION_UA);
  rd_kafka_resp_err_t err = rd_kafka_share_subscribe(rkshare, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (err) {
    fprintf(stderr, "subscribe: %s\n", rd_kafka_err2str(err));
    return 1;
  }

  long count = 0;
  time_t deadline = time(NULL) + seconds;
  while (count < max && time(NULL) < deadline) {
    rd_kafka_messages_t *batch = NULL;
    rd_kafka_error_t *error = rd_kafka_share_poll(rkshare, 200, &batch);
    if (error) {
      fprintf(stderr, "poll: %s\n", rd_kafka_error_string(error));
      rd_kafka_error_destroy(error);
      rd_kafka_messages_destroy(batch);
      continue;
    }
    size_t n = batch ? rd_kafka_messages_count(batch) : 0;
    for (size_t i = 0; i < n; i++) {
      rd_kafka_message_t *m = rd_kafka_messages_get(batch, i);
      if (m->err) {
        fprintf(stderr, "record error: %s\n", rd_kafka_message_errstr(m));
        continue;
      }
      printf("R %d %lld %d %.*s\n", (int)m->partition, (long long)m->offset, (int)rd_kafka_message_delivery_count(m), (int)m->len, (const char *)m->payload);
      count++;
      if (hold) continue;
      int match = on == NULL || (m->len == strlen(on) && memcmp(m->payload, on, m->len) == 0);
      rd_kafka_share_acknowledge_type(rkshare, m, ack_type(match ? action : other));
    }
    rd_kafka_messages_destroy(batch);
    if (hold && count >= max) {
      printf("HELD %ld\n", count);
      for (;;) pause(); /* killed by the test with its records in flight */
    }
  }
  if (strcmp(commit, "sync") == 0) {
    rd_kafka_topic_partition_list_t *results = NULL;
    rd_kafka_error_t *error = rd_kafka_share_commit_sync(rkshare, 10000, &results);
    if (error) {
      fprintf(stderr, "commit: %s\n", rd_kafka_error_string(error));
      rd_kafka_error_destroy(error);
    }
    if (results) {
      for (int i = 0; i < results->cnt; i++)
        if (results->elems[i].err) printf("COMMIT-ERROR %d %s\n", (int)results->elems[i].partition, rd_kafka_err2name(results->elems[i].err));
      rd_kafka_topic_partition_list_destroy(results);
    }
  } else if (strcmp(commit, "async") == 0) {
    rd_kafka_error_t *error = rd_kafka_share_commit_async(rkshare);
    if (error) rd_kafka_error_destroy(error);
  }
  printf("DONE %ld\n", count);
  rd_kafka_error_t *error = rd_kafka_share_consumer_close(rkshare);
  if (error) rd_kafka_error_destroy(error);
  rd_kafka_share_destroy(rkshare);
  return 0;
}
