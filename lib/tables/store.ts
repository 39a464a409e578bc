import type { CustomTableDoc } from './custom-table.schema';
import type { TableRowsRepository } from './table-rows.repository';
import type { TablesRepository } from './tables.repository';

/** The tables feature's own collections, for one organization. */
export interface TablesStore {
  tables: TablesRepository;
  /** Rows of a table that was loaded through `tables` (so it belongs to this organization). */
  tableRows(table: Pick<CustomTableDoc, '_id'>): TableRowsRepository;
}
