// S3's SDK as the gateway uses it, loaded on first use (see on-first-use.ts for why through a module of ours).
export { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
