/* fuzz_tls_peer.c - the certificate chain a client sends (core/tls_peer.c
 * tls_chain_check): DER certificates parsed, verified against a CA and its
 * CRL (at a fixed time), proxies walked for the end entity's DN. Input:
 * one byte of flags (bit 0: proxy certificates allowed), then
 * certificates, each a 2-byte big-endian length and its DER. */
/* SPDX-License-Identifier: MIT */
#include <gnutls/gnutls.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "core/tls.h"
#include "tests/fuzz/fuzz.h"

/* The CA (/DC=org/DC=fuzz/CN=Fuzz Root CA) that issued the corpus's
 * chains, and its CRL; made once with openssl (docs/internals/fuzzing.md). */
static const char ca_pem[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBtjCCAVygAwIBAgICEAAwCgYIKoZIzj0EAwIwQjETMBEGCgmSJomT8ixkARkW\n"
    "A29yZzEUMBIGCgmSJomT8ixkARkWBGZ1enoxFTATBgNVBAMMDEZ1enogUm9vdCBD\n"
    "QTAeFw0yNDAxMDEwMDAwMDBaFw00NDAxMDEwMDAwMDBaMEIxEzARBgoJkiaJk/Is\n"
    "ZAEZFgNvcmcxFDASBgoJkiaJk/IsZAEZFgRmdXp6MRUwEwYDVQQDDAxGdXp6IFJv\n"
    "b3QgQ0EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATi8qRaR3vcSsxSfhjePE+m\n"
    "TH1okNUVszX4zh3gKl4AgrQhjUxTX9TAO/gK8/xXz6AhAUJmoGQI6nNrCZHVXv3K\n"
    "o0IwQDAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwIBBjAdBgNVHQ4EFgQU\n"
    "VqF5SWSqlBvKPOTvoN+147Xjk7wwCgYIKoZIzj0EAwIDSAAwRQIgDQKeiDT2NHL7\n"
    "OmmSBAoK2KHGfUO4j17aBgQmP9+8wiECIQCFBsVZgW+Op9ivLiHQ2VPxyi3+p7cY\n"
    "f6hxPIObt7psiQ==\n"
    "-----END CERTIFICATE-----\n";
static const char crl_pem[] =
    "-----BEGIN X509 CRL-----\n"
    "MIHxMIGZAgEBMAoGCCqGSM49BAMCMEIxEzARBgoJkiaJk/IsZAEZFgNvcmcxFDAS\n"
    "BgoJkiaJk/IsZAEZFgRmdXp6MRUwEwYDVQQDDAxGdXp6IFJvb3QgQ0EXDTI2MTEy\n"
    "NjExNTgwMVoXDTQ2MTEyMTExNTgwMVowFTATAgIQAhcNMjYxMTI2MTE1ODAxWqAP\n"
    "MA0wCwYDVR0UBAQCAhAAMAoGCCqGSM49BAMCA0cAMEQCIAIThaC6zGnTqyEhRNu8\n"
    "MLMiN4HUCWPynF5O6JW9ZoPeAiAjAKRGIsDeQIxwg5MQIJWQX5rlfAJARwHRNR/E\n"
    "TqdUpw==\n"
    "-----END X509 CRL-----\n";

#define CHECK_TIME 1893456000 /* 2030-01-01: the corpus's chains are valid */

static X509_STORE *store(void)
{
    static X509_STORE *st;
    BIO *b;
    X509 *ca;
    X509_CRL *crl;

    if (st)
        return st;
    st = X509_STORE_new();
    b = BIO_new_mem_buf(ca_pem, -1);
    ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    b = BIO_new_mem_buf(crl_pem, -1);
    crl = PEM_read_bio_X509_CRL(b, NULL, NULL, NULL);
    BIO_free(b);
    if (!st || !ca || !crl || !X509_STORE_add_cert(st, ca) ||
        !X509_STORE_add_crl(st, crl))
        abort();
    X509_free(ca);
    X509_CRL_free(crl);
    /* as tls_store_build sets them */
    X509_STORE_set_flags(st, X509_V_FLAG_CRL_CHECK |
                                 X509_V_FLAG_CRL_CHECK_ALL);
    X509_STORE_set_purpose(st, X509_PURPOSE_SSL_CLIENT);
    X509_STORE_set_depth(st, 10);
    X509_VERIFY_PARAM_set_time(X509_STORE_get0_param(st), CHECK_TIME);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gnutls_datum_t chain[16];
    struct tls_peer p;
    unsigned n = 0;
    size_t at = 1;

    fuzz_quiet();
    if (size < 1)
        return 0;
    while (n < 16 && at + 2 <= size) {
        size_t len = (size_t)data[at] << 8 | data[at + 1];
        at += 2;
        if (len > size - at)
            len = size - at;
        chain[n].data = (unsigned char *)data + at;
        chain[n++].size = (unsigned)len;
        at += len;
    }
    memset(&p, 0, sizeof(p));
    tls_chain_check(store(), data[0] & 1, chain, n, &p);
    if (p.ok && (p.why[0] || p.dn[0] != '/' || !p.presented))
        abort(); /* verified: a DN, and no reason to refuse */
    if (!p.ok && n && !p.why[0])
        abort(); /* refused: always a reason */
    return 0;
}
