// The coordinator room's door. Group assignors today; the coordinator runtime, the group and
// transaction coordinators come with their issues.
export { rangeAssign, uniformAssign, type Assignment, type AssignorInput, type AssignorMember, type AssignorOutput } from './group/assignors.js';
