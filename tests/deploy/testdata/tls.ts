// A certificate authority and a server certificate for 127.0.0.1, made with
// the openssl CLI for one test: what a reader gets from Let's Encrypt.
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

function openssl(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("openssl", args, { cwd, timeout: 60_000 }, (error, _stdout, stderr) => {
      if (error == null) resolve();
      else reject(new Error(`openssl ${args[0]} failed: ${stderr || error.message}`));
    });
  });
}

/** Where {@link makeCertificates} put its files. */
export interface Certificates {
  /** The CA's certificate, for clients to trust (PEM). */
  readonly caPath: string;
  /** The server's certificate (PEM), as `ssl_certificate`. */
  readonly certPath: string;
  /** The server's key (PEM), as `ssl_certificate_key`. */
  readonly keyPath: string;
}

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

/**
 * Makes a CA and a certificate it signs for `127.0.0.1` and `localhost`,
 * valid for two days.
 * @param dir The folder to write them in.
 * @returns Their paths.
 */
export async function makeCertificates(dir: string): Promise<Certificates> {
  await openssl([
    "req",
    "-x509",
    ...EC_KEY,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=Fedwork self-hosting test CA",
  ], dir);
  await openssl([
    "req",
    ...EC_KEY,
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=127.0.0.1",
  ], dir);
  // Clients check the subject alternative names, not the common name.
  await writeFile(
    join(dir, "server.ext"),
    "subjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth\n",
  );
  await openssl([
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "server.ext",
  ], dir);
  return {
    caPath: join(dir, "ca.pem"),
    certPath: join(dir, "server.pem"),
    keyPath: join(dir, "server.key"),
  };
}
