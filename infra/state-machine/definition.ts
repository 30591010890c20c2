// The approval state machine's ASL document, shared by the CDK stack (DefinitionBody.fromFile with
// substitutions) and the local runtime (the same file, the same substitutions, run locally).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const approvalDefinitionPath = fileURLToPath(new URL('./approval.asl.json', import.meta.url));

/** The `${Name}` placeholders the document uses; the stack and the local runtime fill each one. */
export interface ApprovalSubstitutions {
  readonly Partition: string;
  readonly HeldCallStepsFunction: string;
}

/** The document with its placeholders filled, as Step Functions would read it. */
export const approvalDefinition = (substitutions: ApprovalSubstitutions): unknown => {
  const text = readFileSync(approvalDefinitionPath, 'utf8').replace(/\$\{(\w+)\}/g, (_whole, name: string) => {
    const value: unknown = Reflect.get(substitutions, name);
    if (typeof value !== 'string') throw new Error(`The approval run names \${${name}}, which nothing substitutes.`);
    return value;
  });
  return JSON.parse(text);
};
