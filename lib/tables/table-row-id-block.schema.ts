import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/**
 * One reserved range of row ids of one table: `_id` is `<tableId>:<start>`, the range is [start, end].
 *
 * Ids are reserved by inserting the block that starts right after the newest one. The unique `_id` makes
 * that insert the atomic step, so two writers can never get the same start, and because every block starts
 * at some block's end+1 a writer with a stale view always collides instead of overlapping. This works on
 * MongoDB and on FerretDB v1, whose findAndModify/$inc is a read followed by a write (not atomic). Blocks
 * are never deleted while the table exists, so a deleted row's id is never handed out again.
 */
export const tableRowIdBlockSchema = new Schema(
  {
    _id: { type: String, required: true },
    tableId: { type: String, required: true },
    start: { type: Number, required: true },
    end: { type: Number, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);
// Serves: removing every block of a deleted table.
tableRowIdBlockSchema.index({ tableId: 1 });

export type TableRowIdBlockDoc = DocOf<typeof tableRowIdBlockSchema>;
export const tableRowIdBlockModel = defineModel(
  'TableRowIdBlock',
  'table_row_id_blocks',
  tableRowIdBlockSchema,
);

export const rowIdBlockId = (tableId: string, start: number) => `${tableId}:${start}`;
