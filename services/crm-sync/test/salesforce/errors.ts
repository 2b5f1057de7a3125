// Salesforce's error answer shape, thrown from the org, SOQL and routes alike and turned into
// the documented array body by the server.
/** A Salesforce error answer: status plus the documented array body. */
export class SalesforceApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly fields?: string[],
  ) {
    super(message);
  }
  body(): unknown {
    return [{ message: this.message, errorCode: this.errorCode, ...(this.fields ? { fields: this.fields } : {}) }];
  }
}

export const notFound = (): SalesforceApiError => new SalesforceApiError(404, 'NOT_FOUND', 'The requested resource does not exist');
