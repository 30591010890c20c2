// AWS unit prices the cost table multiplies by: us-east-1, on-demand, Lambda on arm64, dated
// 2026-12 and read from these pages (re-read them before quoting a figure):
//   "AWS Lambda Pricing" (aws.amazon.com/lambda/pricing): duration per GB-second on Arm, first tier;
//     requests per million.
//   "Amazon API Gateway Pricing" (aws.amazon.com/api-gateway/pricing): HTTP APIs, per million
//     requests, first 300 million a month (a request is metered per 512 KB).
//   "Amazon DynamoDB Pricing for On-Demand Capacity" (aws.amazon.com/dynamodb/pricing/on-demand):
//     write and read request units, Standard table class, single region.
//   "AWS Step Functions Pricing" (aws.amazon.com/step-functions/pricing): Standard workflows per
//     state transition; Express workflows per request and per GB-second, first tier.
//   "AWS Key Management Service Pricing" (aws.amazon.com/kms/pricing): requests to symmetric and
//     HMAC keys (GenerateDataKey, Decrypt, GenerateMac, VerifyMac), per 10 000.
//   "Amazon EventBridge Pricing" (aws.amazon.com/eventbridge/pricing): custom events put on an
//     event bus, per million (an event is metered per 64 KB).

export const pricesAsOf = '2026-12';
export const pricesRegion = 'us-east-1';

export interface UnitPrices {
  /** Lambda on arm64, per GB-second of duration (billed per 1 ms). */
  readonly lambdaGbSecond: number;
  readonly lambdaRequest: number;
  /** API Gateway HTTP API, per request. */
  readonly httpApiRequest: number;
  /** DynamoDB on-demand, per write request unit (1 KB written) and read request unit (4 KB read, strongly consistent). */
  readonly dynamoDbWriteUnit: number;
  readonly dynamoDbReadUnit: number;
  /** Step Functions Standard, per state transition. */
  readonly stepFunctionsTransition: number;
  /** Step Functions Express, per request and per GB-second (billed per 100 ms, 64 MB at least). */
  readonly stepFunctionsExpressRequest: number;
  readonly stepFunctionsExpressGbSecond: number;
  readonly kmsRequest: number;
  readonly eventBridgeEvent: number;
}

export const unitPrices: UnitPrices = {
  lambdaGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1_000_000,
  httpApiRequest: 1.0 / 1_000_000,
  dynamoDbWriteUnit: 0.625 / 1_000_000,
  dynamoDbReadUnit: 0.125 / 1_000_000,
  stepFunctionsTransition: 0.025 / 1_000,
  stepFunctionsExpressRequest: 1.0 / 1_000_000,
  stepFunctionsExpressGbSecond: 0.00001667,
  kmsRequest: 0.03 / 10_000,
  eventBridgeEvent: 1.0 / 1_000_000,
};
