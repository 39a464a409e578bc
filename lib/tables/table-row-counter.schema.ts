import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** The last row id handed out for one table (`_id` is the table's id); see TableRowsRepository.reserveIds. */
export const tableRowCounterSchema = new Schema(
  {
    _id: { type: String, required: true },
    last: { type: Number, required: true },
  },
  { versionKey: false },
);

export type TableRowCounterDoc = DocOf<typeof tableRowCounterSchema>;
export const tableRowCounterModel = defineModel(
  'TableRowCounter',
  'table_row_counters',
  tableRowCounterSchema,
);
