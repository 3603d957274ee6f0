import { z } from 'zod';

/**
 * The stated intent of a fund-moving call: what the model believes it is doing, checked against the
 * arguments by the intent hook. Either a short sentence (`"buy 50 USD of ETH"`, `"sell 0.5 ETH"`,
 * `"swap 100 USDC to ETH"`, `"long BTC 1000 USD 3x"`) or an object.
 */
export const intentSchema = z
  .union([
    z.string().trim().min(1).max(300),
    z.object({
      side: z.string().trim().min(1).nullish(),
      asset: z.string().trim().min(1).nullish(),
      amountUsd: z.number().finite().positive().nullish(),
      amount: z.number().finite().positive().nullish(),
    }),
  ])
  .nullish()
  .describe('What you intend this call to do, e.g. "buy 50 USD of ETH" or { side: "buy", asset: "ETH", amountUsd: 50 }. Must match the arguments.');

const symbol = z.string().trim().min(1).max(40).describe('Token symbol, e.g. ETH');
const address = z.string().trim().min(1).max(100).nullish().describe('Contract address, when the user gave one');
const chain = z.string().trim().min(1).max(40).nullish();
/**
 * Refuse a call that sizes one order in more than one way (`{ amount: 3000, amountUsd: 10 }`): the checks
 * and the handler must never read different sizes. Fields sent as `null` do not count.
 */
function oneSizeField(fields: readonly string[]) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
    const given = fields.filter((f) => value[f] !== null && value[f] !== undefined);
    if (given.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: [given[1]!],
        message: `give exactly one of ${fields.join(', ')} to size the order; got ${given.join(' and ')}, which could disagree`,
      });
    }
  };
}

/** The preview/confirm flag, declared here because a refined object cannot be extended later. */
const confirm = z.boolean().nullish().describe('true executes; otherwise the call returns a preview and moves nothing');

const slippageBps = z.number().finite().nonnegative().max(10_000).nullish().describe('Maximum slippage for this order in basis points');

export const swapInput = z.object({
  from: symbol.describe('Token to spend'),
  to: symbol.describe('Token to receive'),
  amount: z.number().finite().positive().nullish().describe('Units of `from` to spend'),
  amountUsd: z.number().finite().positive().nullish().describe('USD worth of `from` to spend (when amount is absent)'),
  fromAddress: address,
  toAddress: address,
  chain,
  slippageBps,
  intent: intentSchema,
  confirm,
}).superRefine(oneSizeField(['amount', 'amountUsd']));
export type SwapInput = z.output<typeof swapInput>;

export const buyInput = z.object({
  symbol,
  amountUsd: z.number().finite().positive().describe('USD to spend'),
  address,
  chain,
  payWith: z.string().trim().min(1).nullish().describe('Stablecoin to pay with (default USDC)'),
  slippageBps,
  intent: intentSchema,
});
export type BuyInput = z.output<typeof buyInput>;

export const sellInput = z.object({
  symbol,
  amount: z.number().finite().positive().nullish().describe('Units to sell'),
  amountUsd: z.number().finite().positive().nullish().describe('USD worth to sell'),
  fraction: z.number().finite().positive().max(1).nullish().describe('Fraction of the holding to sell (1 = all)'),
  address,
  chain,
  receive: z.string().trim().min(1).nullish().describe('Stablecoin to receive (default USDC)'),
  slippageBps,
  intent: intentSchema,
  confirm,
}).superRefine(oneSizeField(['amount', 'amountUsd', 'fraction']));
export type SellInput = z.output<typeof sellInput>;

export const perpOpenInput = z.object({
  symbol,
  side: z.enum(['long', 'short']),
  sizeUsd: z.number().finite().positive().describe('Position notional in USD'),
  leverage: z.number().finite().min(1).max(100),
  slippageBps,
  intent: intentSchema,
});
export type PerpOpenInput = z.output<typeof perpOpenInput>;

export const perpCloseInput = z.object({
  symbol,
  fraction: z.number().finite().positive().max(1).nullish().describe('Fraction to close (default 1 = all)'),
  intent: intentSchema,
});
export type PerpCloseInput = z.output<typeof perpCloseInput>;

export const transferInput = z.object({
  asset: symbol,
  amount: z.number().finite().positive(),
  to: z.string().trim().min(4).max(128).describe('External destination address'),
  chain,
  intent: intentSchema,
});
export type TransferInput = z.output<typeof transferInput>;

export const withdrawInput = z.object({
  asset: symbol,
  amount: z.number().finite().positive(),
  destination: z.string().trim().min(2).max(128).describe('Registered withdrawal destination (address or account id)'),
  intent: intentSchema,
});
export type WithdrawInput = z.output<typeof withdrawInput>;

export const emergencyStopInput = z.object({
  action: z.enum(['engage', 'release', 'status']),
  reason: z.string().trim().min(1).max(500).nullish(),
});
export type EmergencyStopInput = z.output<typeof emergencyStopInput>;
