// The server side of a TLS connection as a Node-API addon: OpenSSL (the one inside Node, whose
// symbols Node exports) over two memory BIOs, driven synchronously by the network layer, which
// owns the socket. Why not node:tls: its socket hands every decrypted TLS record to JavaScript as
// its own event, and librdkafka writes a produce request as many small records (one per 1 KiB value
// and one per ~10-byte record header), so a TLS produce cost the broker ~270,000 events per 600 MB.
// Here one call decrypts everything a socket read brought, straight into the request buffer.
//
// Every call is synchronous and leaves OpenSSL's (thread-wide, shared with Node) error queue
// empty. Built by scripts/build-native.mjs; src/security/native-tls.ts falls back to node:tls
// when it is not there.
#include <node_api.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call) do { if ((call) != napi_ok) return NULL; } while (0)

/* Tags on the two kinds of external, so one passed for the other is a TypeError, not a crash. */
static const napi_type_tag CONTEXT_TAG = { 0x6c6f676c696e6531ULL, 0x746c73636f6e7478ULL };
static const napi_type_tag SESSION_TAG = { 0x6c6f676c696e6532ULL, 0x746c7373657373ULL };

/* The pointer in an external carrying `tag`, or NULL with a TypeError thrown. */
static void *tagged(napi_env env, napi_value v, const napi_type_tag *tag, const char *what) {
  bool ok = false;
  void *data = NULL;
  if (napi_check_object_type_tag(env, v, tag, &ok) != napi_ok || !ok || napi_get_value_external(env, v, &data) != napi_ok || data == NULL) {
    napi_throw_type_error(env, NULL, what);
    return NULL;
  }
  return data;
}

/* Throws an Error whose message is `what` and OpenSSL's first queued error, and empties the queue. */
static napi_value throw_ssl(napi_env env, const char *what) {
  char detail[256] = "";
  unsigned long e = ERR_get_error();
  if (e != 0) ERR_error_string_n(e, detail, sizeof detail);
  ERR_clear_error();
  char message[512];
  snprintf(message, sizeof message, "%s%s%s", what, detail[0] ? ": " : "", detail);
  napi_throw_error(env, NULL, message);
  return NULL;
}

/* ---- contexts --------------------------------------------------------------------------------- */

static void free_ctx(napi_env env, void *data, void *hint) {
  (void)env; (void)hint;
  SSL_CTX_free((SSL_CTX *)data);
}

/* A Buffer or string argument as bytes; NULL when it is null or undefined. */
static int bytes_arg(napi_env env, napi_value v, const char **data, size_t *len) {
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok) return -1;
  if (t == napi_null || t == napi_undefined) { *data = NULL; *len = 0; return 0; }
  bool is_buffer = false;
  napi_is_buffer(env, v, &is_buffer);
  if (!is_buffer) return -1;
  void *p;
  if (napi_get_buffer_info(env, v, &p, len) != napi_ok) return -1;
  *data = (const char *)p;
  return 0;
}

/* A NUL-terminated copy of a Buffer argument, or NULL (caller frees). */
static char *string_arg(napi_env env, napi_value v, int *bad) {
  const char *data; size_t len;
  if (bytes_arg(env, v, &data, &len) != 0) { *bad = 1; return NULL; }
  if (data == NULL) return NULL;
  char *s = malloc(len + 1);
  if (s == NULL) { *bad = 1; return NULL; }
  memcpy(s, data, len);
  s[len] = '\0';
  return s;
}

/* Accepts any offered client certificate; the verdict is read after the handshake (ssl.client.auth=requested). */
static int accept_and_record(int ok, X509_STORE_CTX *store) {
  (void)ok; (void)store;
  return 1;
}

/* A read-only memory BIO over configuration bytes; NULL when there are too many for OpenSSL's int. */
static BIO *config_bio(const char *data, size_t len) {
  return len > INT_MAX ? NULL : BIO_new_mem_buf(data, (int)len);
}

static int use_chain_pem(SSL_CTX *ctx, const char *pem, size_t len) {
  BIO *bio = config_bio(pem, len);
  if (bio == NULL) return 0;
  X509 *leaf = PEM_read_bio_X509(bio, NULL, NULL, NULL);
  int ok = leaf != NULL && SSL_CTX_use_certificate(ctx, leaf) == 1;
  X509_free(leaf);
  while (ok) {
    X509 *next = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    if (next == NULL) break;
    ok = SSL_CTX_add0_chain_cert(ctx, next) == 1; /* takes ownership on success */
    if (!ok) X509_free(next);
  }
  if (ok) ERR_clear_error(); /* the end of the PEM text reads as an error */
  BIO_free(bio);
  return ok;
}

static int use_key_pem(SSL_CTX *ctx, const char *pem, size_t len, char *passphrase) {
  BIO *bio = config_bio(pem, len);
  if (bio == NULL) return 0;
  EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, NULL, passphrase != NULL ? passphrase : (char *)"");
  BIO_free(bio);
  int ok = key != NULL && SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  return ok;
}

static int use_pkcs12(SSL_CTX *ctx, const char *der, size_t len, const char *passphrase) {
  BIO *bio = config_bio(der, len);
  if (bio == NULL) return 0;
  PKCS12 *p12 = d2i_PKCS12_bio(bio, NULL);
  BIO_free(bio);
  if (p12 == NULL) return 0;
  EVP_PKEY *key = NULL; X509 *cert = NULL; STACK_OF(X509) *chain = NULL;
  int ok = PKCS12_parse(p12, passphrase != NULL ? passphrase : "", &key, &cert, &chain) == 1;
  PKCS12_free(p12);
  ok = ok && cert != NULL && key != NULL && SSL_CTX_use_certificate(ctx, cert) == 1 && SSL_CTX_use_PrivateKey(ctx, key) == 1;
  for (int i = 0; ok && chain != NULL && i < sk_X509_num(chain); i++) ok = SSL_CTX_add1_chain_cert(ctx, sk_X509_value(chain, i)) == 1;
  X509_free(cert); EVP_PKEY_free(key); sk_X509_pop_free(chain, X509_free);
  return ok;
}

/* Trusted CAs for client certificates, also named to the client as acceptable issuers (as Node's `ca` does). */
static int use_ca_pem(SSL_CTX *ctx, const char *pem, size_t len) {
  BIO *bio = config_bio(pem, len);
  if (bio == NULL) return 0;
  X509_STORE *store = SSL_CTX_get_cert_store(ctx);
  int count = 0, ok = 1;
  for (;;) {
    X509 *ca = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    if (ca == NULL) break;
    ok = X509_STORE_add_cert(store, ca) == 1 && SSL_CTX_add_client_CA(ctx, ca) == 1;
    X509_free(ca);
    if (!ok) break;
    count++;
  }
  if (ok) ERR_clear_error(); /* the end of the PEM text reads as an error */
  BIO_free(bio);
  return ok && count > 0;
}

static int protocol_version(const char *name) {
  if (name == NULL) return 0;
  if (strcmp(name, "TLSv1.2") == 0) return TLS1_2_VERSION;
  if (strcmp(name, "TLSv1.3") == 0) return TLS1_3_VERSION;
  return -1;
}

/*
 * contextNew(cert, key, pfx, passphrase, ca, clientAuth, minVersion, maxVersion, cipherList, cipherSuites):
 * every argument a Buffer or null, clientAuth 0 none / 1 requested / 2 required.
 */
static napi_value context_new(napi_env env, napi_callback_info info) {
  size_t argc = 10;
  napi_value argv[10];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc != 10) { napi_throw_type_error(env, NULL, "contextNew takes 10 arguments"); return NULL; }
  const char *cert, *key, *pfx, *ca; size_t cert_len, key_len, pfx_len, ca_len;
  int bad = 0;
  bad |= bytes_arg(env, argv[0], &cert, &cert_len) != 0;
  bad |= bytes_arg(env, argv[1], &key, &key_len) != 0;
  bad |= bytes_arg(env, argv[2], &pfx, &pfx_len) != 0;
  bad |= bytes_arg(env, argv[4], &ca, &ca_len) != 0;
  int32_t client_auth = 0;
  bad |= napi_get_value_int32(env, argv[5], &client_auth) != napi_ok;
  char *passphrase = string_arg(env, argv[3], &bad);
  char *min_version = string_arg(env, argv[6], &bad);
  char *max_version = string_arg(env, argv[7], &bad);
  char *cipher_list = string_arg(env, argv[8], &bad);
  char *cipher_suites = string_arg(env, argv[9], &bad);
  napi_value result = NULL;
  SSL_CTX *ctx = NULL;
  ERR_clear_error();
  if (bad) { napi_throw_type_error(env, NULL, "contextNew: bad argument"); goto done; }
  int min = protocol_version(min_version), max = protocol_version(max_version);
  if (min < 0 || max < 0) { napi_throw_error(env, NULL, "unsupported TLS protocol version"); goto done; }
  ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == NULL) { throw_ssl(env, "SSL_CTX_new"); goto done; }
  /* No renegotiation, no session tickets or cache (every connection makes a full handshake). */
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
  /* Idle connections give their record buffers back, as node:tls's do. */
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  /* Take whole buffers of records from the input BIO, not a header and a body per record. */
  SSL_CTX_set_read_ahead(ctx, 1);
  if ((min != 0 && SSL_CTX_set_min_proto_version(ctx, min) != 1) || (max != 0 && SSL_CTX_set_max_proto_version(ctx, max) != 1)) {
    throw_ssl(env, "protocol versions"); goto done;
  }
  /* An empty TLSv1.2 list (only TLSv1.3 suites named) leaves TLSv1.2 no cipher, as node:tls does. */
  if (cipher_list != NULL && SSL_CTX_set_cipher_list(ctx, cipher_list) != 1
      && !(cipher_list[0] == '\0' && ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_NO_CIPHER_MATCH)) {
    throw_ssl(env, "ssl.cipher.suites (TLSv1.2)"); goto done;
  }
  ERR_clear_error();
  if (cipher_suites != NULL && SSL_CTX_set_ciphersuites(ctx, cipher_suites) != 1) { throw_ssl(env, "ssl.cipher.suites (TLSv1.3)"); goto done; }
  if (pfx != NULL) {
    if (!use_pkcs12(ctx, pfx, pfx_len, passphrase)) { throw_ssl(env, "PKCS12 keystore"); goto done; }
  } else {
    if (cert == NULL || key == NULL) { napi_throw_error(env, NULL, "a certificate and its key are needed"); goto done; }
    if (!use_chain_pem(ctx, cert, cert_len)) { throw_ssl(env, "certificate chain"); goto done; }
    if (!use_key_pem(ctx, key, key_len, passphrase)) { throw_ssl(env, "private key"); goto done; }
  }
  if (SSL_CTX_check_private_key(ctx) != 1) { throw_ssl(env, "the private key does not match the certificate"); goto done; }
  if (ca != NULL && !use_ca_pem(ctx, ca, ca_len)) { throw_ssl(env, "truststore"); goto done; }
  if (client_auth == 2) SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
  else if (client_auth == 1) SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_and_record);
  else SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
  if (napi_create_external(env, ctx, free_ctx, NULL, &result) != napi_ok) { result = NULL; goto done; }
  ctx = NULL; /* owned by the external now */
  if (napi_type_tag_object(env, result, &CONTEXT_TAG) != napi_ok) result = NULL;
done:
  SSL_CTX_free(ctx);
  ERR_clear_error();
  free(passphrase); free(min_version); free(max_version); free(cipher_list); free(cipher_suites);
  return result;
}

/* ---- sessions --------------------------------------------------------------------------------- */

typedef struct {
  SSL *ssl;
  BIO *in;  /* ciphertext from the client, fed by the network layer */
  BIO *out; /* ciphertext for the client, taken by the network layer */
} session;

static void session_release(session *s) {
  if (s->ssl != NULL) SSL_free(s->ssl); /* frees both BIOs */
  s->ssl = NULL;
}

static void free_session(napi_env env, void *data, void *hint) {
  (void)env; (void)hint;
  session_release((session *)data);
  free(data);
}

static session *session_arg(napi_env env, napi_value v) {
  session *s = tagged(env, v, &SESSION_TAG, "not a TLS session");
  if (s == NULL) return NULL;
  if (s->ssl == NULL) { napi_throw_error(env, NULL, "TLS session already freed"); return NULL; }
  return s;
}

/* The call's arguments (exactly `argc`), the first being a live session; NULL with an exception thrown otherwise. */
static session *session_call(napi_env env, napi_callback_info info, size_t argc, napi_value *argv, const char *usage) {
  size_t got = argc;
  if (napi_get_cb_info(env, info, &got, argv, NULL, NULL) != napi_ok) return NULL;
  if (got != argc) { napi_throw_type_error(env, NULL, usage); return NULL; }
  return session_arg(env, argv[0]);
}

/* sessionNew(context) */
static napi_value session_new(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  void *ctx = argc == 1 ? tagged(env, argv[0], &CONTEXT_TAG, "sessionNew(context)") : NULL;
  if (ctx == NULL) { if (argc != 1) napi_throw_type_error(env, NULL, "sessionNew(context)"); return NULL; }
  ERR_clear_error();
  session *s = calloc(1, sizeof *s);
  if (s == NULL) { napi_throw_error(env, NULL, "out of memory"); return NULL; }
  s->ssl = SSL_new((SSL_CTX *)ctx);
  s->in = BIO_new(BIO_s_mem());
  s->out = BIO_new(BIO_s_mem());
  if (s->ssl == NULL || s->in == NULL || s->out == NULL) {
    /* The BIOs are not the SSL's yet: each is freed on its own. */
    BIO_free(s->in); BIO_free(s->out); SSL_free(s->ssl);
    free(s);
    return throw_ssl(env, "SSL_new");
  }
  /* A read of an empty input BIO is "want more", not end of file. */
  BIO_set_mem_eof_return(s->in, -1);
  SSL_set_bio(s->ssl, s->in, s->out);
  SSL_set_accept_state(s->ssl);
  ERR_clear_error();
  napi_value result;
  if (napi_create_external(env, s, free_session, NULL, &result) != napi_ok) { session_release(s); free(s); return NULL; }
  if (napi_type_tag_object(env, result, &SESSION_TAG) != napi_ok) return NULL;
  return result;
}

/* The bytes of a Buffer argument at [offset, offset + length). */
static int slice_arg(napi_env env, napi_value buf, napi_value off, napi_value len, char **data, size_t *n) {
  void *p; size_t size; int64_t o, l;
  if (napi_get_buffer_info(env, buf, &p, &size) != napi_ok) return -1;
  if (napi_get_value_int64(env, off, &o) != napi_ok || napi_get_value_int64(env, len, &l) != napi_ok) return -1;
  if (o < 0 || l < 0 || (uint64_t)o + (uint64_t)l > size) return -1;
  *data = (char *)p + o;
  *n = (size_t)l;
  return 0;
}

/* sessionFeed(session, buffer, offset, length): ciphertext that arrived from the client. */
static napi_value session_feed(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  session *s = session_call(env, info, 4, argv, "sessionFeed(session, buffer, offset, length)");
  if (s == NULL) return NULL;
  char *data; size_t n;
  if (slice_arg(env, argv[1], argv[2], argv[3], &data, &n) != 0) { napi_throw_range_error(env, NULL, "sessionFeed: bad slice"); return NULL; }
  ERR_clear_error();
  while (n > 0) {
    int chunk = n > 0x40000000 ? 0x40000000 : (int)n;
    int w = BIO_write(s->in, data, chunk);
    if (w <= 0) return throw_ssl(env, "BIO_write");
    data += w; n -= (size_t)w;
  }
  return NULL;
}

static napi_value int_value(napi_env env, int64_t v) {
  napi_value r;
  return napi_create_int64(env, v, &r) == napi_ok ? r : NULL;
}

/* sessionHandshake(session): 1 when the handshake is done, 0 while it needs more from the client; throws when it failed. */
static napi_value session_handshake(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  session *s = session_call(env, info, 1, argv, "sessionHandshake(session)");
  if (s == NULL) return NULL;
  ERR_clear_error();
  int r = SSL_do_handshake(s->ssl);
  if (r == 1) { ERR_clear_error(); return int_value(env, 1); }
  int e = SSL_get_error(s->ssl, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) { ERR_clear_error(); return int_value(env, 0); }
  return throw_ssl(env, "TLS handshake failed");
}

/*
 * sessionRead(session, buffer, offset, length): decrypts what was fed into the slice, as much as
 * there is; returns the bytes written, or -1 once the client closed the TLS session (close_notify).
 */
static napi_value session_read(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  session *s = session_call(env, info, 4, argv, "sessionRead(session, buffer, offset, length)");
  if (s == NULL) return NULL;
  char *data; size_t n;
  if (slice_arg(env, argv[1], argv[2], argv[3], &data, &n) != 0) { napi_throw_range_error(env, NULL, "sessionRead: bad slice"); return NULL; }
  ERR_clear_error();
  size_t total = 0;
  while (total < n) {
    size_t got = 0;
    int r = SSL_read_ex(s->ssl, data + total, n - total, &got);
    if (r == 1) { total += got; continue; }
    int e = SSL_get_error(s->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) break;
    if (e == SSL_ERROR_ZERO_RETURN) { ERR_clear_error(); return int_value(env, total > 0 ? (int64_t)total : -1); }
    return throw_ssl(env, "TLS read failed");
  }
  ERR_clear_error();
  return int_value(env, (int64_t)total);
}

/*
 * sessionWrite(session, source, dest, destOffset): encrypts all of `source` into `dest` from
 * destOffset and returns where the records end. A record at a time goes through the output BIO,
 * so it never grows past one record (a memory BIO grows by copying and wiping its old buffer).
 * `dest` must hold the records: the source plus up to SSL3_RT_MAX_ENCRYPTED_OVERHEAD per 16 KiB.
 */
static napi_value session_write(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  session *s = session_call(env, info, 4, argv, "sessionWrite(session, source, dest, destOffset)");
  if (s == NULL) return NULL;
  void *src, *dst; size_t n, cap; int64_t at;
  if (napi_get_buffer_info(env, argv[1], &src, &n) != napi_ok || napi_get_buffer_info(env, argv[2], &dst, &cap) != napi_ok
      || napi_get_value_int64(env, argv[3], &at) != napi_ok || at < 0 || (uint64_t)at > cap) {
    napi_throw_range_error(env, NULL, "sessionWrite: bad arguments");
    return NULL;
  }
  ERR_clear_error();
  const char *data = src;
  size_t pos = (size_t)at;
  while (n > 0) {
    size_t piece = n > SSL3_RT_MAX_PLAIN_LENGTH ? SSL3_RT_MAX_PLAIN_LENGTH : n, written = 0;
    /* A memory BIO takes everything, so a write is whole or an error. */
    if (SSL_write_ex(s->ssl, data, piece, &written) != 1) return throw_ssl(env, "TLS write failed");
    data += written; n -= written;
    size_t pending = BIO_ctrl_pending(s->out), got = 0;
    if (pending > cap - pos) { napi_throw_range_error(env, NULL, "sessionWrite: destination too small"); return NULL; }
    if (pending > 0 && (BIO_read_ex(s->out, (char *)dst + pos, pending, &got) != 1 || got != pending)) return throw_ssl(env, "BIO_read");
    pos += got;
  }
  ERR_clear_error();
  return int_value(env, (int64_t)pos);
}

/* sessionOutput(session): the ciphertext waiting for the client as a new Buffer, or null. */
static napi_value session_output(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  session *s = session_call(env, info, 1, argv, "sessionOutput(session)");
  if (s == NULL) return NULL;
  ERR_clear_error();
  size_t pending = BIO_ctrl_pending(s->out);
  napi_value result;
  if (pending == 0) { napi_get_null(env, &result); return result; }
  void *p;
  CHECK(napi_create_buffer(env, pending, &p, &result));
  size_t got = 0;
  if (BIO_read_ex(s->out, p, pending, &got) != 1 || got != pending) return throw_ssl(env, "BIO_read");
  return result;
}

/*
 * sessionPeer(session): { certificate: Buffer (DER) | null, verifyError: string | null, protocol,
 * maxFragment } after the handshake.
 */
static napi_value session_peer(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  session *s = session_call(env, info, 1, argv, "sessionPeer(session)");
  if (s == NULL) return NULL;
  napi_value result, cert, verify_error, protocol;
  CHECK(napi_create_object(env, &result));
  X509 *peer = SSL_get1_peer_certificate(s->ssl);
  if (peer == NULL) {
    napi_get_null(env, &cert);
    napi_get_null(env, &verify_error);
  } else {
    int len = i2d_X509(peer, NULL);
    void *p;
    if (len <= 0 || napi_create_buffer(env, (size_t)len, &p, &cert) != napi_ok) { X509_free(peer); return throw_ssl(env, "i2d_X509"); }
    unsigned char *q = p;
    i2d_X509(peer, &q);
    X509_free(peer);
    long v = SSL_get_verify_result(s->ssl);
    if (v == X509_V_OK) napi_get_null(env, &verify_error);
    else CHECK(napi_create_string_utf8(env, X509_verify_cert_error_string(v), NAPI_AUTO_LENGTH, &verify_error));
  }
  CHECK(napi_create_string_utf8(env, SSL_get_version(s->ssl), NAPI_AUTO_LENGTH, &protocol));
  /* The largest record plaintext the client agreed to (RFC 6066 max_fragment_length, else 16 KiB). */
  SSL_SESSION *negotiated = SSL_get_session(s->ssl);
  uint8_t mfl = negotiated != NULL ? SSL_SESSION_get_max_fragment_length(negotiated) : TLSEXT_max_fragment_length_DISABLED;
  napi_value max_fragment;
  CHECK(napi_create_int32(env, mfl >= TLSEXT_max_fragment_length_512 && mfl <= TLSEXT_max_fragment_length_4096 ? 256 << mfl : SSL3_RT_MAX_PLAIN_LENGTH, &max_fragment));
  CHECK(napi_set_named_property(env, result, "maxFragment", max_fragment));
  CHECK(napi_set_named_property(env, result, "certificate", cert));
  CHECK(napi_set_named_property(env, result, "verifyError", verify_error));
  CHECK(napi_set_named_property(env, result, "protocol", protocol));
  ERR_clear_error();
  return result;
}

/* sessionShutdown(session): queues close_notify in sessionOutput. */
static napi_value session_shutdown(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  session *s = session_call(env, info, 1, argv, "sessionShutdown(session)");
  if (s == NULL) return NULL;
  if (SSL_is_init_finished(s->ssl)) SSL_shutdown(s->ssl);
  ERR_clear_error();
  return NULL;
}

/* sessionFree(session): releases OpenSSL's state now rather than at garbage collection. */
static napi_value session_free(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  session *s = argc == 1 ? tagged(env, argv[0], &SESSION_TAG, "not a TLS session") : NULL;
  if (s != NULL) session_release(s);
  return NULL;
}

NAPI_MODULE_INIT() {
  const struct { const char *name; napi_callback fn; } fns[] = {
    { "contextNew", context_new }, { "sessionNew", session_new }, { "sessionFeed", session_feed },
    { "sessionHandshake", session_handshake }, { "sessionRead", session_read }, { "sessionWrite", session_write },
    { "sessionOutput", session_output }, { "sessionPeer", session_peer }, { "sessionShutdown", session_shutdown },
    { "sessionFree", session_free },
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value f;
    if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f) != napi_ok) return NULL;
    if (napi_set_named_property(env, exports, fns[i].name, f) != napi_ok) return NULL;
  }
  return exports;
}
