// The Cedar release the gateway decides with, known without loading Cedar's wasm (a function's
// cold start compiles it only when a decision needs it). It is @cedar-policy/cedar-wasm's version,
// the one its wasm names itself (getCedarSDKVersion); the bundler refuses a Cedar of another
// release, so this cannot drift from the Cedar a function ships.

export const cedarRelease = '4.13.0';
