import { Schema } from 'mongoose';

export interface PendingChange {
  changeId: string;
  field: 'name' | 'abn';
  value: string;
  requestedByUserId: string;
  requestedAt: Date;
}

export interface OrganizationDoc {
  _id: string;
  name: string;
  tradingName?: string;
  abn?: string;
  email?: string;
  phone?: string;
  licence?: string;
  isRealEstate?: boolean;
  legalAddress?: Record<string, unknown>;
  tradingAddress?: Record<string, unknown>;
  pendingChanges: PendingChange[];
  /** The default user group. A single field keeps "at most one default" true under concurrent writes. */
  defaultUserGroupId?: string | null;
  /** Set by operators: only such organizations may publish public agents and knowledge bases. */
  hostsPublicContent: boolean;
  billingVisibility: 'all' | 'owners';
  subscription: { plan: string; status: string };
  createdAt: Date;
  updatedAt: Date;
}

export const organizationSchema = new Schema<OrganizationDoc>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    tradingName: String,
    abn: String,
    email: String,
    phone: String,
    licence: String,
    isRealEstate: Boolean,
    legalAddress: { type: Schema.Types.Mixed },
    tradingAddress: { type: Schema.Types.Mixed },
    pendingChanges: [
      {
        _id: false,
        changeId: { type: String, required: true },
        field: { type: String, required: true },
        value: { type: String, required: true },
        requestedByUserId: { type: String, required: true },
        requestedAt: { type: Date, required: true },
      },
    ],
    defaultUserGroupId: { type: String, default: null },
    hostsPublicContent: { type: Boolean, default: false },
    billingVisibility: { type: String, default: 'all' },
    subscription: { plan: { type: String, default: 'free' }, status: { type: String, default: 'active' } },
  },
  { timestamps: true, minimize: false, versionKey: false },
);
