// ACL changes (Kafka's AclControlManager): CreateAcls and DeleteAcls turned into
// AccessControlEntryRecords and RemoveAccessControlEntryRecords against the current image. Pure:
// ids come from the Prng it is given; nothing changes until the records are replayed.
import {
  ErrorCode, type CreateAclsRequestAclCreation, type CreateAclsResponseAclCreationResult, type DeleteAclsRequestDeleteAclsFilter,
  type DeleteAclsResponseDeleteAclsFilterResult,
} from '../protocol/index.js';
import { filterMatches, invalidBinding, invalidFilter, metadataRecord, type MetadataImage, type MetadataRecord, type StandardAcl } from '../metadata/index.js';
import { limits, type Prng } from '../util/index.js';
import { randomUuid } from './topics.js';
import type { ControllerResult } from './result.js';

const sameBinding = (a: Omit<StandardAcl, 'id'>, b: Omit<StandardAcl, 'id'>): boolean =>
  a.resourceType === b.resourceType && a.resourceName === b.resourceName && a.patternType === b.patternType && a.principal === b.principal
  && a.host === b.host && a.operation === b.operation && a.permissionType === b.permissionType;

/** One result per creation; an ACL that already exists is a success that writes nothing. */
export function createAcls(image: MetadataImage, creations: readonly CreateAclsRequestAclCreation[], prng: Prng): ControllerResult<CreateAclsResponseAclCreationResult[]> {
  if (creations.length > limits.aclsPerRequestMax) {
    return { records: [], response: creations.map(() => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `at most ${limits.aclsPerRequestMax} ACLs per request` })) };
  }
  const records: MetadataRecord[] = [];
  const added: StandardAcl[] = [];
  const existing = [...image.acls.acls.values()];
  const response = creations.map((c) => {
    const binding = { resourceType: c.resourceType, resourceName: c.resourceName, patternType: c.resourcePatternType, principal: c.principal,
      host: c.host, operation: c.operation, permissionType: c.permissionType };
    const why = invalidBinding(binding);
    if (why !== null) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: why };
    if (existing.some((a) => sameBinding(a, binding)) || added.some((a) => sameBinding(a, binding))) return { errorCode: ErrorCode.NONE, errorMessage: null };
    let id = randomUuid(prng);
    while (image.acls.acls.has(id) || added.some((a) => a.id === id)) id = randomUuid(prng);
    const acl = { id, ...binding };
    added.push(acl);
    records.push(metadataRecord('AccessControlEntryRecord', acl));
    return { errorCode: ErrorCode.NONE, errorMessage: null };
  });
  return { records, response };
}

/** One result per filter with the ACLs it matched; an ACL matched by several filters is removed once. */
export function deleteAcls(image: MetadataImage, filters: readonly DeleteAclsRequestDeleteAclsFilter[]): ControllerResult<DeleteAclsResponseDeleteAclsFilterResult[]> {
  if (filters.length > limits.aclsPerRequestMax) {
    return { records: [], response: filters.map(() => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `at most ${limits.aclsPerRequestMax} filters per request`, matchingAcls: [] })) };
  }
  const removed = new Set<string>();
  const records: MetadataRecord[] = [];
  const response = filters.map((f) => {
    const filter = { resourceType: f.resourceTypeFilter, resourceName: f.resourceNameFilter, patternType: f.patternTypeFilter, principal: f.principalFilter,
      host: f.hostFilter, operation: f.operation, permissionType: f.permissionType };
    const why = invalidFilter(filter);
    if (why !== null) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: why, matchingAcls: [] };
    const matching = [...image.acls.acls.values()].filter((a) => filterMatches(filter, a));
    for (const a of matching) {
      if (removed.has(a.id)) continue;
      removed.add(a.id);
      records.push(metadataRecord('RemoveAccessControlEntryRecord', { id: a.id }));
    }
    return {
      errorCode: ErrorCode.NONE, errorMessage: null,
      matchingAcls: matching.map((a) => ({ errorCode: ErrorCode.NONE, errorMessage: null, resourceType: a.resourceType, resourceName: a.resourceName,
        patternType: a.patternType, principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType })),
    };
  });
  return { records, response };
}
