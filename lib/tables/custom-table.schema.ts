import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const FIELD_TYPES = ['text', 'numeric', 'boolean', 'timestamp', 'jsonb'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

const fieldSchema = new Schema(
  {
    name: { type: String, required: true },
    /** Where rows keep this field's value: its name at creation, unchanged by renames (so a rename moves no
     * data and cannot race with writes). Absent on fields stored before keys existed: then the name. */
    key: { type: String },
    type: { type: String, required: true, enum: FIELD_TYPES },
    required: { type: Boolean, required: true },
    /** The default as JSON text in its wire form (timestamps normalised to ISO 8601 UTC); null when none.
     * Kept as text so a jsonb default with `$` or `.` keys never reaches the store as a document. */
    defaultJson: { type: String, default: null },
    comments: { type: String, default: '' },
    /** Data Dictionary field this column is linked to; always equal to `name` while set. */
    ddFieldName: { type: String, default: null },
  },
  { _id: false },
);

/** A user-defined table. Its rows live in their own collection (see storage.ts). */
export const customTableSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    name: { type: String, required: true },
    description: { type: String, default: null },
    fields: { type: [fieldSchema], required: true },
    creatorUserId: { type: String, required: true },
    /** Bumped by every definition change; column changes compare-and-set on it. */
    schemaVersion: { type: Number, default: 1 },
  },
  { timestamps: true, minimize: false, versionKey: false },
);
// Serves: table lookup by name on every table request, the table list ordered by name, and name uniqueness
// per organization.
customTableSchema.index({ organizationId: 1, name: 1 }, { unique: true });

export type TableFieldDoc = DocOf<typeof fieldSchema>;
export type CustomTableDoc = DocOf<typeof customTableSchema>;
export const customTableModel = defineModel('CustomTable', 'custom_tables', customTableSchema);
