// Runs an S3 API server (@20minutes/s3rver) for the S3 backend's tests, as its own process:
//   node s3-server.js <directory> <accessKeyId> <secretAccessKey> <bucket> [port]
// It listens on 127.0.0.1 on the port given (a restart over the same directory) or a free one, accepts only the given access key (signatures unchecked), and prints
// {"port": N} on one line once it is ready. The tests start it and kill it by its pid.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const S3rver = require('@20minutes/s3rver') as new (o: object) => { run(): Promise<{ port: number }> };
const AWSAccount = require('@20minutes/s3rver/lib/models/account.js') as {
  new (id: number, name: string): { createKeyPair(id: string, secret: string): void };
  DUMMY_ACCOUNT: { revokeAccessKey(id: string): void };
};

const [directory, accessKeyId, secretAccessKey, bucket, portArg] = process.argv.slice(2);
if (directory === undefined || accessKeyId === undefined || secretAccessKey === undefined || bucket === undefined) {
  process.stderr.write('usage: s3-server <directory> <accessKeyId> <secretAccessKey> <bucket> [port]\n');
  process.exit(2);
}
// Only our key: the built-in S3RVER key is revoked so "an unknown key is refused" means something.
AWSAccount.DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
new AWSAccount(1, 'logline-tests').createKeyPair(accessKeyId, secretAccessKey);
// Signatures are not compared: s3rver's canonical request differs from the SDK's for some calls
// (ListObjectsV2 fails), so it would refuse valid requests. The access key is still checked.
const server = new S3rver({ address: '127.0.0.1', port: portArg === undefined ? 0 : Number(portArg), directory, silent: true, allowMismatchedSignatures: true, configureBuckets: [{ name: bucket }] });
const address = await server.run();
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
