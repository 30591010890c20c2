// KMS's SDK as the gateway uses it, loaded on first use (see on-first-use.ts for why through a module of ours).
export {
  DecryptCommand,
  GenerateDataKeyCommand,
  GenerateMacCommand,
  GetPublicKeyCommand,
  KMSClient,
  SignCommand,
  VerifyCommand,
  VerifyMacCommand,
} from '@aws-sdk/client-kms';
