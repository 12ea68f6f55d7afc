// The user's bank: a site never granted to the model. Its tool names what a model must never see.
document.modelContext.registerTool({
  name: 'readBalanceOfTheUser',
  description: "The user's balance, in the bank's own words.",
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
  execute: () => ({ balance: 12345.67 }),
});
