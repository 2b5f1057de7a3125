// Provider-neutral CRM records: what every connector's pull (and every file import) yields, and
// what the mirror stores. A connector maps its provider's objects to these and nothing else.
import type { StageBucket } from '@sightline/proto-schemas';

export interface CrmStage {
  id: string;
  name: string;
  position: number;
  /** Decided by the connector from the provider's stage metadata (closed? won?). */
  bucket: StageBucket;
}

export interface CrmPipeline {
  id: string;
  name: string;
  stages: CrmStage[];
}

export interface CrmCompany {
  crm_id: string;
  name: string;
  domain: string | null;
  lifecycle_stage: string | null;
  created_at: string;
  updated_at: string;
}

export interface CrmContact {
  crm_id: string;
  email: string | null;
  lifecycle_stage: string | null;
  company_crm_id: string | null;
  updated_at: string;
}

export interface CrmDeal {
  crm_id: string;
  name: string;
  amount: number | null;
  currency: string | null;
  pipeline_id: string | null;
  stage_id: string | null;
  company_crm_id: string | null;
  contact_crm_ids: string[];
  created_at: string;
  closed_at: string | null;
  updated_at: string;
  /**
   * The stage changes the CRM recorded for this deal, oldest first, when its API keeps them
   * (Salesforce OpportunityHistory, Pipedrive's deal flow): each stage entered and when. Absent when
   * the provider keeps none (the mirror then sees stage changes only between two syncs).
   */
  stage_history?: CrmStageChange[];
}

export interface CrmStageChange {
  stage_id: string;
  pipeline_id: string | null;
  /** When the deal entered the stage (ISO 8601). */
  at: string;
}

/** One page of a pull (or one chunk of an import): any mix of records. */
export interface CrmRecords {
  pipelines?: CrmPipeline[];
  companies?: CrmCompany[];
  contacts?: CrmContact[];
  deals?: CrmDeal[];
  /** Records the CRM deleted (by crm id), when its API says so (Salesforce: queryAll of IsDeleted rows). */
  deleted?: { companies?: string[]; contacts?: string[]; deals?: string[] };
}

/** Where the records belong. `source` is the change source: crm:<provider>, or import. */
export interface MirrorScope {
  workspaceId: string;
  websiteId: string;
  provider: string;
  source: string;
}
