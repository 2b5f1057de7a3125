import { openPglite, type PgliteHandle } from './pglite-store';
import { describeSqlStoreContract } from './sql.contract';

describeSqlStoreContract('pglite', async () => {
  const handle: PgliteHandle = await openPglite();
  return {
    open: (schema) => handle.store(schema),
    cleanup: () => handle.release(),
  };
});
