// Everything the sides of a held call need together: what the local runtime and the test support
// build once. Each function in AWS builds only the part its side uses.
import type { DecisionDeps } from './approver-decisions.js';
import type { EscalationDeps } from './escalation.js';
import type { HeldCallStepsDeps } from './held-call-steps.js';
import type { RecoveryDeps } from './recovery.js';

export type ApprovalServices = HeldCallStepsDeps & RecoveryDeps & DecisionDeps & EscalationDeps;
