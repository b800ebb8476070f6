# pki.sh - a private certificate authority for the TLS tests and bench.
# SPDX-License-Identifier: MIT
#
# Sourced (bash). pki_make DIR builds, with openssl only:
#   DIR/root.pem          a root CA          /DC=org/DC=loom-test/CN=Loom Test Root CA
#   DIR/inter.pem         an intermediate CA, signed by the root
#   DIR/server.pem .key   the server: 127.0.0.1 and localhost, signed by the
#                         intermediate; server.pem holds it and the
#                         intermediate (the chain a server sends)
#   DIR/NAME.pem .key     user certificates signed by the intermediate
#                         (pki_user NAME "CN" [openssl ca args...])
#   DIR/ca/               the hashed CA directory (openssl rehash): both CAs
#                         and a CRL of each
#   DIR/other/            a second root CA that ca/ does not know
# pki_user DIR NAME CN [ARGS]: a user /DC=org/DC=loom-test/CN=CN signed by
#   the intermediate (ARGS go to openssl ca: -startdate, -enddate).
# pki_other_user DIR NAME CN: the same, signed by the other root.
# pki_proxy DIR NAME FROM: an RFC 3820 proxy certificate of user FROM
#   (subject FROM's + /CN=<serial>), DIR/NAME.pem a proxy file as
#   voms-proxy-init writes one (mode 0600): the proxy, its key, FROM's
#   certificate.
# pki_revoke DIR NAME: revoke NAME's certificate, write the CRLs again.
# pki_server DIR NAME: another server certificate (a renewal: new key,
#   new serial) as DIR/NAME.pem and .key.
# pki_serial FILE: the serial of the first certificate in FILE (hex, as
#   openssl prints it).
# Every function returns non-zero (after saying why on stderr) on failure.

PKI_DC="/DC=org/DC=loom-test"

# The openssl ca configuration of the CA in $1 (root or inter).
pki_cnf() {
    cat <<EOF
[ca]
default_ca = this
[this]
dir = $1
database = $1/index.txt
new_certs_dir = $1/new
certificate = $1/ca.pem
private_key = $1/ca.key
serial = $1/serial
crlnumber = $1/crlnumber
default_md = sha256
default_days = 30
default_crl_days = 30
policy = anything
preserve = yes
unique_subject = no
email_in_dn = no
[anything]
domainComponent = optional
organizationName = optional
commonName = supplied
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[user_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[server_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[proxy_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
proxyCertInfo = critical,language:id-ppl-inheritAll
EOF
}

# pki_ossl ARGS...: openssl without the system's configuration (Debian's
# raises the security level), its output kept for the failure message.
pki_ossl() {
    local out
    out=$(OPENSSL_CONF=/dev/null openssl "$@" 2>&1) && return 0
    echo "pki: openssl $1 failed: $out" >&2
    return 1
}

# pki_ca_init DIR CA SUBJECT [SIGNER]: a CA in DIR/CA, self-signed or
# signed by the CA SIGNER.
pki_ca_init() {
    local d=$1/$2
    mkdir -p "$d/new" || return 1
    : >"$d/index.txt"
    echo 1000 >"$d/serial"
    echo 1000 >"$d/crlnumber"
    pki_cnf "$d" >"$d/ca.cnf"
    pki_ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -keyout "$d/ca.key" -subj "$3" -out "$d/ca.csr" || return 1
    if [ -z "${4:-}" ]; then
        pki_ossl ca -batch -notext -selfsign -config "$d/ca.cnf" \
            -keyfile "$d/ca.key" -extensions ca_ext -days 365 \
            -in "$d/ca.csr" -out "$d/ca.pem"
    else
        pki_ossl ca -batch -notext -config "$1/$4/ca.cnf" -extensions ca_ext \
            -days 365 -in "$d/ca.csr" -out "$d/ca.pem"
    fi
}

# pki_issue DIR CA NAME SUBJECT EXT [ARGS]: DIR/NAME.key and .pem.
pki_issue() {
    local dir=$1 ca=$2 name=$3 subj=$4 ext=$5
    shift 5
    pki_ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -keyout "$dir/$name.key" -subj "$subj" -out "$dir/$name.csr" &&
        pki_ossl ca -batch -notext -config "$dir/$ca/ca.cnf" \
            -extensions "$ext" "$@" -in "$dir/$name.csr" \
            -out "$dir/$name.pem" &&
        chmod 0600 "$dir/$name.key"
}

# pki_crls DIR: the CRLs of both CAs into the hashed directory.
pki_crls() {
    local c
    for c in root inter; do
        pki_ossl ca -gencrl -config "$1/$c/ca.cnf" \
            -out "$1/ca/$c.crl.pem" || return 1
    done
    pki_ossl rehash "$1/ca"
}

pki_make() {
    local dir=$1
    mkdir -p "$dir/ca" "$dir/other" || return 1
    pki_ca_init "$dir" root "$PKI_DC/CN=Loom Test Root CA" &&
        pki_ca_init "$dir" inter "$PKI_DC/CN=Loom Test Intermediate CA" root &&
        pki_ca_init "$dir" otherca "/DC=org/DC=elsewhere/CN=Other Root CA" ||
        return 1
    cp "$dir/root/ca.pem" "$dir/root.pem"
    cp "$dir/inter/ca.pem" "$dir/inter.pem"
    cp "$dir/root.pem" "$dir/inter.pem" "$dir/ca/"
    cp "$dir/otherca/ca.pem" "$dir/other/root.pem"
    pki_server "$dir" server && pki_crls "$dir"
}

# pki_server DIR NAME: a server certificate; its key is loomd's account's
# (loomd reads it after giving up root).
pki_server() {
    pki_issue "$1" inter "$2" "$PKI_DC/CN=localhost" server_ext &&
        cat "$1/inter.pem" >>"$1/$2.pem" &&
        { [ "$(id -u)" != 0 ] || chown "$LOOM_SERVICE_USER" "$1/$2.key"; }
}

pki_user() {
    local dir=$1 name=$2 cn=$3
    shift 3
    pki_issue "$dir" inter "$name" "$PKI_DC/CN=$cn" user_ext "$@"
}

pki_other_user() {
    pki_issue "$1" otherca "$2" "/DC=org/DC=elsewhere/CN=$3" user_ext
}

pki_proxy() {
    local dir=$1 name=$2 from=$3 subj serial
    subj=$(OPENSSL_CONF=/dev/null openssl x509 -in "$dir/$from.pem" \
        -noout -subject -nameopt compat | sed 's/^subject=//')
    serial=$((RANDOM * 32768 + RANDOM))
    pki_ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -keyout "$dir/$name.key" -subj "$subj/CN=$serial" \
        -out "$dir/$name.csr" || return 1
    pki_cnf "$dir" >"$dir/proxy.cnf"
    pki_ossl x509 -req -in "$dir/$name.csr" -CA "$dir/$from.pem" \
        -CAkey "$dir/$from.key" -set_serial "$serial" -days 1 \
        -extfile "$dir/proxy.cnf" -extensions proxy_ext \
        -out "$dir/$name.pem" || return 1
    chmod 0600 "$dir/$name.pem" &&
        cat "$dir/$name.key" "$dir/$from.pem" >>"$dir/$name.pem"
}

pki_revoke() {
    pki_ossl ca -config "$1/inter/ca.cnf" -revoke "$1/$2.pem" &&
        pki_crls "$1"
}

pki_serial() {
    OPENSSL_CONF=/dev/null openssl x509 -in "$1" -noout -serial |
        sed 's/^serial=//'
}
