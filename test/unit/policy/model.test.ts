// The Cedar model: the schema generated from the catalog, canonical arguments as Cedar values, and
// the demo organization's policies deciding at the exact edges of its amounts.
//
// Long: the schema, the value mapping and the demo policies at each amount edge are three tables of
// cases.
import { describe, expect, it } from 'vitest';
import type { CatalogTool } from '../../../shared/catalog/tool.js';
import type { GatewaySnapshot } from '../../../shared/control-plane/gateway-snapshot.js';
import { cedarModelOf, cedarTypeOf, recordOf } from '../../../shared/policy/cedar-schema.js';
import { cedarDecimalText, toCedarRecord } from '../../../shared/policy/cedar-values.js';
import type { PolicyDecision } from '../../../shared/policy/engine.js';
import { anAgent } from '../../support/agents.js';
import { humanStep } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';
import { canonical, demoPolicyText, loadDemo, loadedShop, shopEngine, toolNamed } from './policy-fixtures.js';

/** The demo organization, loaded once for the whole file. */
let demoSnapshot: Promise<GatewaySnapshot> | undefined;
const demo = (): Promise<GatewaySnapshot> => {
  demoSnapshot ??= loadDemo();
  return demoSnapshot;
};

const decimal = (arg: string) => ({ __extn: { fn: 'decimal', arg } });

const shopModel = async () => {
  const snapshot = await loadedShop({});
  return { snapshot, model: cedarModelOf([...snapshot.catalog.tools, ...snapshot.catalog.disabled]) };
};

const actionOf = (schema: Awaited<ReturnType<typeof shopModel>>['model']['schema'], name: string) => {
  const namespace = schema[''];
  if (namespace === undefined) throw new Error('no empty namespace');
  return namespace.actions[name];
};

describe('the generated Cedar schema', () => {
  it(
    verifies('policy.model', 'declares Agent in Groups with outside and an optional customer, Group and System'),
    async () => {
      const { model } = await shopModel();
      expect(model.schema['']?.entityTypes).toEqual({
        Group: {},
        System: {},
        Agent: {
          memberOfTypes: ['Group'],
          shape: {
            type: 'Record',
            attributes: {
              outside: { type: 'Boolean', required: true },
              customer: { type: 'String', required: false },
            },
          },
        },
      });
    },
  );

  it(
    verifies('policy.model', 'has one action per tool (turned-off ones too), in its system group and in read or write'),
    async () => {
      const { model } = await shopModel();
      const actions = model.schema['']?.actions ?? {};
      expect(Object.keys(actions).sort()).toEqual([
        'read',
        'shop',
        'shop.look',
        'shop.off',
        'shop.pay',
        'shop.refund',
        'shop.search',
        'write',
      ]);
      expect(actions.read).toEqual({});
      expect(actions.write).toEqual({});
      expect(actions.shop).toEqual({});
      expect(actionOf(model.schema, 'shop.look')?.memberOf).toEqual([{ id: 'shop' }, { id: 'read' }]);
      expect(actionOf(model.schema, 'shop.pay')?.memberOf).toEqual([{ id: 'shop' }, { id: 'write' }]);
      // POST made read by the system's `access` map.
      expect(actionOf(model.schema, 'shop.search')?.memberOf).toEqual([{ id: 'shop' }, { id: 'read' }]);
      // DELETE, turned off: still known to policies.
      expect(actionOf(model.schema, 'shop.off')?.memberOf).toEqual([{ id: 'shop' }, { id: 'write' }]);
      expect(actionOf(model.schema, 'shop.look')?.appliesTo).toEqual({
        principalTypes: ['Agent'],
        resourceTypes: ['System'],
        context: {
          type: 'Record',
          attributes: { arguments: { type: 'Record', attributes: {}, required: true } },
        },
      });
    },
  );

  it(
    verifies(
      'policy.model',
      'types the context from the input schema: string, long, bool, decimal, set, record; optional vs required; nullable optional; plain numbers and unions left out',
    ),
    async () => {
      const { model } = await shopModel();
      expect(actionOf(model.schema, 'shop.pay')?.appliesTo?.context).toEqual({
        type: 'Record',
        attributes: {
          arguments: {
            type: 'Record',
            required: true,
            attributes: {
              amount: { type: 'Extension', name: 'decimal', required: true },
              currency: { type: 'String', required: true },
              count: { type: 'Long', required: true },
              flag: { type: 'Boolean', required: false },
              // required in the input schema, but nullable: absent when null.
              note: { type: 'String', required: false },
              tags: { type: 'Set', element: { type: 'String' }, required: false },
              meta: {
                type: 'Record',
                required: false,
                attributes: { a: { type: 'Long', required: true }, b: { type: 'String', required: false } },
              },
              // x-amount on a plain number makes it a decimal.
              fee: { type: 'Extension', name: 'decimal', required: false },
            },
          },
        },
      });
      const shape = model.shapes.get('shop.pay');
      expect([...(shape?.attributes.keys() ?? [])]).toEqual([
        'amount',
        'currency',
        'count',
        'flag',
        'note',
        'tags',
        'meta',
        'fee',
      ]);
      expect(shape?.attributes.has('ratio')).toBe(false);
      expect(shape?.attributes.has('mixed')).toBe(false);
    },
  );

  it(verifies('policy.model', 'types the demo purchase order: amount a decimal, lines a set of records'), async () => {
    const snapshot = await demo();
    const model = cedarModelOf([...snapshot.catalog.tools, ...snapshot.catalog.disabled]);
    const create = model.schema['']?.actions['erp.purchase_orders.create'];
    expect(create?.memberOf).toEqual([{ id: 'erp' }, { id: 'write' }]);
    expect(create?.appliesTo?.context).toEqual({
      type: 'Record',
      attributes: {
        arguments: {
          type: 'Record',
          required: true,
          attributes: {
            vendor_id: { type: 'String', required: true },
            amount: { type: 'Extension', name: 'decimal', required: true },
            currency: { type: 'String', required: true },
            description: { type: 'String', required: false },
            lines: {
              type: 'Set',
              required: false,
              element: {
                type: 'Record',
                attributes: {
                  sku: { type: 'String', required: true },
                  quantity: { type: 'Long', required: true },
                  note: { type: 'String', required: false },
                },
              },
            },
          },
        },
      },
    });
    expect(model.schema['']?.actions['erp.vendors.get']?.memberOf).toEqual([{ id: 'erp' }, { id: 'read' }]);
  });

  it(verifies('policy.model', 'maps single JSON Schema types and leaves out what Cedar cannot hold exactly'), () => {
    expect(cedarTypeOf({ type: 'string' })).toEqual({ kind: 'string' });
    expect(cedarTypeOf({ enum: ['EUR', 'USD'] })).toEqual({ kind: 'string' });
    expect(cedarTypeOf({ type: ['integer', 'null'] })).toEqual({ kind: 'long' });
    expect(cedarTypeOf({ type: 'boolean' })).toEqual({ kind: 'bool' });
    expect(cedarTypeOf({ type: 'number', 'x-amount': true })).toEqual({ kind: 'decimal' });
    expect(cedarTypeOf({ type: ['string', 'number'], 'x-amount': true })).toEqual({ kind: 'decimal' });
    expect(cedarTypeOf({ type: 'array', items: { type: 'integer' } })).toEqual({
      kind: 'set',
      element: { kind: 'long' },
    });
    expect(cedarTypeOf({ type: 'number' })).toBeNull();
    expect(cedarTypeOf({ type: ['string', 'integer'] })).toBeNull();
    expect(cedarTypeOf({})).toBeNull();
    expect(cedarTypeOf({ enum: ['EUR', 1] })).toBeNull();
    expect(cedarTypeOf({ type: 'array', items: { type: 'number' } })).toBeNull();
    expect(cedarTypeOf({ type: 'array' })).toBeNull();
    expect(cedarTypeOf({ type: 'null' })).toBeNull();
  });
});

describe('canonical arguments as Cedar values', () => {
  const shape = recordOf({
    type: 'object',
    required: ['amount', 'count'],
    properties: {
      amount: { type: 'string', 'x-amount': true },
      count: { type: 'integer' },
      name: { type: 'string' },
      flag: { type: 'boolean' },
      ratio: { type: 'number' },
      tags: { type: 'array', items: { type: 'string' } },
      prices: { type: 'array', items: { type: 'string', 'x-amount': true } },
      meta: { type: 'object', required: ['a'], properties: { a: { type: 'integer' }, b: { type: 'string' } } },
    },
  });

  it(
    verifies(
      'policy.model',
      'converts each type, amounts as decimals with a fraction, skipping left-out and null fields',
    ),
    () => {
      expect(
        toCedarRecord(
          {
            amount: '1500',
            count: 3,
            name: 'x',
            flag: false,
            ratio: 0.5,
            tags: ['a', 'b'],
            prices: ['1.25', '-3'],
            meta: { a: 1, b: null },
            extra: 'ignored',
          },
          shape,
        ),
      ).toEqual({
        ok: true,
        value: {
          amount: decimal('1500.0'),
          count: 3,
          name: 'x',
          flag: false,
          tags: ['a', 'b'],
          prices: [decimal('1.25'), decimal('-3.0')],
          meta: { a: 1 },
        },
      });
      expect(toCedarRecord({ amount: '0.0001', count: 0, name: null }, shape)).toEqual({
        ok: true,
        value: { amount: decimal('0.0001'), count: 0 },
      });
    },
  );

  it(
    verifies('policy.model', 'refuses an amount with more than four fractional digits or beyond ±922337203685477.5807'),
    () => {
      expect(toCedarRecord({ amount: '999.99999', count: 1 }, shape)).toEqual({ ok: false, path: '/amount' });
      expect(toCedarRecord({ amount: '922337203685477.5807', count: 1 }, shape)).toEqual({
        ok: true,
        value: { amount: decimal('922337203685477.5807'), count: 1 },
      });
      expect(toCedarRecord({ amount: '922337203685477.5808', count: 1 }, shape)).toEqual({
        ok: false,
        path: '/amount',
      });
      expect(toCedarRecord({ amount: '922337203685478', count: 1 }, shape)).toEqual({ ok: false, path: '/amount' });
      expect(toCedarRecord({ amount: '-922337203685477.5808', count: 1 }, shape)).toEqual({
        ok: true,
        value: { amount: decimal('-922337203685477.5808'), count: 1 },
      });
      expect(toCedarRecord({ amount: '-922337203685477.5809', count: 1 }, shape)).toEqual({
        ok: false,
        path: '/amount',
      });
      expect(toCedarRecord({ amount: '1', count: 1, prices: ['1', '0.00001'] }, shape)).toEqual({
        ok: false,
        path: '/prices/1',
      });
      expect(cedarDecimalText('1000')).toBe('1000.0');
      expect(cedarDecimalText('1000.5')).toBe('1000.5');
      expect(cedarDecimalText('-0.1234')).toBe('-0.1234');
      expect(cedarDecimalText('0.12345')).toBeNull();
    },
  );

  it(
    verifies(
      'policy.model',
      'refuses integers beyond the safe range, wrong types and missing required fields, naming the path',
    ),
    () => {
      expect(toCedarRecord({ amount: '1', count: Number.MAX_SAFE_INTEGER }, shape)).toEqual({
        ok: true,
        value: { amount: decimal('1.0'), count: Number.MAX_SAFE_INTEGER },
      });
      expect(toCedarRecord({ amount: '1', count: Number.MAX_SAFE_INTEGER + 1 }, shape)).toEqual({
        ok: false,
        path: '/count',
      });
      expect(toCedarRecord({ amount: '1', count: -(2 ** 60) }, shape)).toEqual({ ok: false, path: '/count' });
      expect(toCedarRecord({ amount: '1', count: 1.5 }, shape)).toEqual({ ok: false, path: '/count' });
      expect(toCedarRecord({ amount: 1, count: 1 }, shape)).toEqual({ ok: false, path: '/amount' });
      expect(toCedarRecord({ amount: '1', count: 1, flag: 'true' }, shape)).toEqual({ ok: false, path: '/flag' });
      expect(toCedarRecord({ amount: '1', count: 1, tags: 'a' }, shape)).toEqual({ ok: false, path: '/tags' });
      expect(toCedarRecord({ amount: '1', count: 1, meta: { b: 'x' } }, shape)).toEqual({ ok: false, path: '/meta/a' });
      expect(toCedarRecord({ amount: '1' }, shape)).toEqual({ ok: false, path: '/count' });
      expect(toCedarRecord({ amount: null, count: 1 }, shape)).toEqual({ ok: false, path: '/amount' });
      expect(toCedarRecord([], shape)).toEqual({ ok: false, path: '' });
    },
  );
});

describe('the demo policies', () => {
  const procurement = anAgent('procurement-agent', ['procurement']);
  const support = anAgent('support-agent', ['support'], 'customer-1042');

  /** The demo policy's place: the line of its @id annotation in policies/demo.cedar. */
  const demoPolicy = async (id: string, effect: 'permit' | 'forbid', approvals: string[], approvers: string | null) => {
    const text = await demoPolicyText();
    const line = text.split('\n').findIndex((candidate) => candidate.startsWith(`@id("${id}")`)) + 1;
    expect(line).toBeGreaterThan(0);
    return { name: id, file: 'policies/demo.cedar', line, effect, approvals, approvers };
  };

  const orderDecision = async (amount: string): Promise<PolicyDecision> => {
    const snapshot = await demo();
    const tool = toolNamed(snapshot, 'erp.purchase_orders.create');
    return snapshot.policy.decide(
      procurement,
      tool,
      canonical(tool, `{"vendor_id":"V-100","amount":${amount},"currency":"EUR"}`),
    );
  };

  it.each(['999.99', '"999.99"', '999.9999', '"999.9999"', '0.0001', '"1"'])(
    verifies(['policy.model', 'policy.human-step'], 'runs a purchase order of %s at once for procurement'),
    async (amount) => {
      expect(await orderDecision(amount)).toEqual({
        kind: 'allow',
        step: null,
        determining: [expect.objectContaining(await demoPolicy('small-purchase-orders', 'permit', [], null))],
      });
    },
  );

  it.each(['1000', '"1000"', '1000.00', '"1000.00"', '1000.0001', '"1500.25"'])(
    verifies(['policy.model', 'policy.human-step'], 'holds a purchase order of %s for finance'),
    async (amount) => {
      expect(await orderDecision(amount)).toEqual({
        kind: 'allow',
        step: humanStep({ staff: 'finance', customer: false }),
        determining: [
          expect.objectContaining(await demoPolicy('large-purchase-orders', 'permit', ['staff'], 'finance')),
        ],
      });
    },
  );

  it(
    verifies('policy.model', 'compares decimals exactly, whatever their written form (not canonical 1000.00 included)'),
    async () => {
      const snapshot = await demo();
      const tool = toolNamed(snapshot, 'erp.purchase_orders.create');
      const step = (amount: string) =>
        snapshot.policy.decide(procurement, tool, { vendor_id: 'V-100', amount, currency: 'EUR' });
      expect(step('1000.00')).toMatchObject({ kind: 'allow', step: humanStep({ staff: 'finance', customer: false }) });
      expect(step('999.9999')).toMatchObject({ kind: 'allow', step: null });
      expect(step('1000.0000')).toMatchObject({
        kind: 'allow',
        step: humanStep({ staff: 'finance', customer: false }),
      });
    },
  );

  it.each(['0', '"0.0000"', '-0', '"-0.0001"', '"-5"', '-1500', '"-922337203685477.5808"'])(
    verifies('demo.positive-amounts', 'refuses a purchase order of %s (zero or less), naming the forbid'),
    async (amount) => {
      expect(await orderDecision(amount)).toEqual({
        kind: 'deny',
        reason: 'forbidden',
        determining: [expect.objectContaining(await demoPolicy('positive-amounts', 'forbid', [], null))],
      });
    },
  );

  it.each(['0', '-0.01', '-10', '-600'])(
    verifies(
      'demo.positive-amounts',
      'refuses a refund of %s for a customer: neither the customer nor finance is asked',
    ),
    async (amount) => {
      const snapshot = await demo();
      const tool = toolNamed(snapshot, 'erp.refunds.create');
      expect(
        snapshot.policy.decide(
          support,
          tool,
          canonical(tool, `{"order_reference":"SO-1","amount":${JSON.stringify(amount)},"currency":"EUR"}`),
        ),
      ).toEqual({
        kind: 'deny',
        reason: 'forbidden',
        determining: [expect.objectContaining(await demoPolicy('positive-amounts', 'forbid', [], null))],
      });
    },
  );

  it(
    verifies(['policy.model', 'policy.fail-closed'], 'refuses a purchase order of 999.99999 as not representable'),
    async () => {
      expect(await orderDecision('999.99999')).toEqual({ kind: 'deny', reason: 'not_representable', determining: [] });
    },
  );

  it(verifies('policy.model', 'gives other groups nothing: support cannot create purchase orders'), async () => {
    const snapshot = await demo();
    const tool = toolNamed(snapshot, 'erp.purchase_orders.create');
    expect(snapshot.policy.decide(support, tool, { vendor_id: 'V-1', amount: '5', currency: 'EUR' })).toEqual({
      kind: 'deny',
      reason: 'no_permit',
      determining: [],
    });
    expect(
      snapshot.policy.decide(anAgent('p2', ['procurement-lead']), tool, {
        vendor_id: 'V-1',
        amount: '5',
        currency: 'EUR',
      }),
    ).toEqual({
      kind: 'deny',
      reason: 'no_permit',
      determining: [],
    });
  });

  it(
    verifies(
      ['policy.model', 'policy.human-step'],
      'asks the customer to confirm refunds up to 500, and finance as well above',
    ),
    async () => {
      const snapshot = await demo();
      const tool = toolNamed(snapshot, 'erp.refunds.create');
      const refund = (amount: string, who = support) =>
        snapshot.policy.decide(who, tool, { order_reference: 'SO-1', amount, currency: 'EUR' });
      expect(refund('500')).toEqual({
        kind: 'allow',
        step: humanStep({ staff: null, customer: true }),
        determining: [expect.objectContaining(await demoPolicy('customer-refunds', 'permit', ['customer'], null))],
      });
      expect(refund('500.0001')).toEqual({
        kind: 'allow',
        step: humanStep({ staff: 'finance', customer: true }),
        determining: [
          expect.objectContaining(
            await demoPolicy('large-customer-refunds', 'permit', ['customer', 'staff'], 'finance'),
          ),
        ],
      });
      // The same support agent, not acting for a customer (principal.outside is false).
      expect(refund('10', anAgent('support-agent', ['support']))).toEqual({
        kind: 'deny',
        reason: 'no_permit',
        determining: [],
      });
    },
  );

  it(verifies(['policy.model', 'policy.fail-closed'], 'forbids deleting vendors to everyone'), async () => {
    const snapshot = await demo();
    const tool = toolNamed(snapshot, 'erp.vendors.delete');
    for (const who of [procurement, support]) {
      expect(snapshot.policy.decide(who, tool, { vendor_id: 'V-100' })).toEqual({
        kind: 'deny',
        reason: 'forbidden',
        determining: [expect.objectContaining(await demoPolicy('no-vendor-deletion', 'forbid', [], null))],
      });
    }
  });

  // The demo's tools (others may be added to it): which of them each demo agent sees.
  it(
    verifies(['policy.model', 'policy.listing'], 'lists each demo tool to exactly the demo agents its policies permit'),
    async () => {
      const snapshot = await demo();
      const internalSupport = anAgent('support-agent', ['support']);
      const seen = (name: string) =>
        [procurement, support, internalSupport, anAgent('nobody')].map((who) =>
          snapshot.policy.isListed(who, toolNamed(snapshot, name)),
        );
      expect({
        cancel: seen('erp.purchase_orders.cancel'),
        create: seen('erp.purchase_orders.create'),
        get: seen('erp.purchase_orders.get'),
        refund: seen('erp.refunds.create'),
        track: seen('erp.shipments.track'),
        deleteVendor: seen('erp.vendors.delete'),
        getVendor: seen('erp.vendors.get'),
      }).toEqual({
        cancel: [true, false, false, false],
        create: [true, false, false, false],
        get: [true, true, true, false],
        refund: [false, true, false, false],
        track: [true, true, true, false],
        deleteVendor: [false, false, false, false],
        getVendor: [true, false, false, false],
      });
    },
  );
});

describe('principal, action and resource in policies', () => {
  const pay = { amount: '10', currency: 'EUR', count: 1 };
  const tools = async (cedar: string) => {
    const snapshot = await loadedShop({ 'p.cedar': cedar });
    const tool = (name: string): CatalogTool => toolNamed(snapshot, name);
    return { engine: snapshot.policy, pay: tool('shop.pay'), look: tool('shop.look'), search: tool('shop.search') };
  };

  it(verifies('policy.model', 'makes the agent a member of its groups: principal in Group::"x"'), async () => {
    const { engine, pay: tool } = await tools('permit (principal in Group::"buyers", action, resource);');
    expect(engine.decide(anAgent('a', ['buyers']), tool, pay)).toMatchObject({ kind: 'allow', step: null });
    expect(engine.decide(anAgent('a', ['sellers', 'buyers']), tool, pay)).toMatchObject({ kind: 'allow' });
    expect(engine.decide(anAgent('a', ['sellers']), tool, pay)).toEqual({
      kind: 'deny',
      reason: 'no_permit',
      determining: [],
    });
    expect(engine.decide(anAgent('buyers'), tool, pay)).toMatchObject({ kind: 'deny', reason: 'no_permit' });
  });

  it(verifies('policy.model', 'names the agent itself as Agent::"<id>"'), async () => {
    const { engine, pay: tool } = await tools('permit (principal == Agent::"bot-1", action, resource);');
    expect(engine.decide(anAgent('bot-1', ['x']), tool, pay)).toMatchObject({ kind: 'allow' });
    expect(engine.decide(anAgent('bot-2', ['x']), tool, pay)).toMatchObject({ kind: 'deny', reason: 'no_permit' });
  });

  it(
    verifies('policy.model', 'gives the agent outside (acting for a customer) and the customer it acts for'),
    async () => {
      const outside = await tools('permit (principal, action, resource) when { principal.outside };');
      expect(outside.engine.decide(anAgent('a', [], 'c-1'), outside.pay, pay)).toMatchObject({ kind: 'allow' });
      expect(outside.engine.decide(anAgent('a', []), outside.pay, pay)).toMatchObject({ kind: 'deny' });
      const inside = await tools('permit (principal, action, resource) unless { principal.outside };');
      expect(inside.engine.decide(anAgent('a', []), inside.pay, pay)).toMatchObject({ kind: 'allow' });
      expect(inside.engine.decide(anAgent('a', [], 'c-1'), inside.pay, pay)).toMatchObject({ kind: 'deny' });
      const customer = await tools(
        'permit (principal, action, resource) when { principal has customer && principal.customer == "c-1" };',
      );
      expect(customer.engine.decide(anAgent('a', [], 'c-1'), customer.pay, pay)).toMatchObject({ kind: 'allow' });
      expect(customer.engine.decide(anAgent('a', [], 'c-2'), customer.pay, pay)).toMatchObject({
        kind: 'deny',
        reason: 'no_permit',
      });
      expect(customer.engine.decide(anAgent('a', []), customer.pay, pay)).toMatchObject({
        kind: 'deny',
        reason: 'no_permit',
      });
    },
  );

  // Membership in the action groups comes from the schema's action hierarchy, which the engine
  // must give Cedar when it decides.
  it(
    verifies('policy.model', 'puts read tools in Action::"read": action in Action::"read" permits them and only them'),
    async () => {
      const reads = await tools('permit (principal, action in Action::"read", resource);');
      expect(reads.engine.decide(anAgent('a'), reads.look, {})).toMatchObject({ kind: 'allow', step: null });
      expect(reads.engine.decide(anAgent('a'), reads.search, {})).toMatchObject({ kind: 'allow', step: null });
      expect(reads.engine.decide(anAgent('a'), reads.pay, pay)).toEqual({
        kind: 'deny',
        reason: 'no_permit',
        determining: [],
      });
    },
  );

  it(
    verifies(
      'policy.model',
      'puts write tools in Action::"write": action in Action::"write" permits them and only them',
    ),
    async () => {
      const writes = await tools('permit (principal, action in Action::"write", resource);');
      expect(writes.engine.decide(anAgent('a'), writes.pay, pay)).toMatchObject({ kind: 'allow', step: null });
      expect(writes.engine.decide(anAgent('a'), writes.look, {})).toEqual({
        kind: 'deny',
        reason: 'no_permit',
        determining: [],
      });
    },
  );

  it(verifies('policy.model', 'puts every tool in its system\'s action group: action in Action::"shop"'), async () => {
    const system = await tools('permit (principal, action in Action::"shop", resource);');
    expect(system.engine.decide(anAgent('a'), system.look, {})).toMatchObject({ kind: 'allow', step: null });
    expect(system.engine.decide(anAgent('a'), system.search, {})).toMatchObject({ kind: 'allow', step: null });
    expect(system.engine.decide(anAgent('a'), system.pay, pay)).toMatchObject({ kind: 'allow', step: null });
  });

  it(verifies(['policy.model', 'policy.listing'], 'lists the tools an action-group permit covers'), async () => {
    const reads = await tools('permit (principal, action in Action::"read", resource);');
    expect(reads.engine.isListed(anAgent('a'), reads.look)).toBe(true);
    expect(reads.engine.isListed(anAgent('a'), reads.search)).toBe(true);
    expect(reads.engine.isListed(anAgent('a'), reads.pay)).toBe(false);
  });

  it(verifies('policy.model', 'makes the resource the system: resource == System::"shop"'), async () => {
    const { engine, pay: tool } = await tools('permit (principal, action, resource == System::"shop");');
    expect(engine.decide(anAgent('a'), tool, pay)).toMatchObject({ kind: 'allow' });
    const other = await shopEngine('permit (principal, action, resource == System::"crm");');
    expect(other.decide(anAgent('a'), tool, pay)).toMatchObject({ kind: 'deny', reason: 'no_permit' });
  });

  it(verifies('policy.model', 'reads nested arguments: sets, records and optional fields behind has'), async () => {
    const { engine, pay: tool } = await tools(
      [
        'permit (principal, action == Action::"shop.pay", resource) when {',
        '  context.arguments has tags && context.arguments.tags.contains("urgent") &&',
        '  context.arguments has meta && context.arguments.meta.a > 2 && context.arguments.count <= 5',
        '};',
      ].join('\n'),
    );
    expect(engine.decide(anAgent('a'), tool, { ...pay, tags: ['urgent'], meta: { a: 3 } })).toMatchObject({
      kind: 'allow',
    });
    expect(engine.decide(anAgent('a'), tool, { ...pay, tags: ['later'], meta: { a: 3 } })).toMatchObject({
      kind: 'deny',
      reason: 'no_permit',
    });
    expect(engine.decide(anAgent('a'), tool, { ...pay, tags: ['urgent'], meta: { a: 2 } })).toMatchObject({
      kind: 'deny',
    });
    expect(engine.decide(anAgent('a'), tool, { ...pay, tags: ['urgent'] })).toMatchObject({ kind: 'deny' });
    expect(engine.decide(anAgent('a'), tool, { ...pay, count: 6, tags: ['urgent'], meta: { a: 3 } })).toMatchObject({
      kind: 'deny',
    });
  });
});
