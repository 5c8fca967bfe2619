# Sends the admin requests that Kafka 4.0 dropped (KIP-896) with kafka-python's own protocol
# classes over a raw socket, as clients from before Kafka 2.0 do, and prints what came back as
# JSON. Used by test/broker/old-versions.test.ts.
import json, socket, sys
from kafka.protocol.parser import KafkaProtocol
from kafka.protocol.admin import (
    CreateTopicsRequest_v0, CreateTopicsRequest_v1, DeleteTopicsRequest_v0, DescribeConfigsRequest_v0,
    CreateAclsRequest_v0, DescribeAclsRequest_v0, DeleteAclsRequest_v0)

host, port = sys.argv[1].rsplit(':', 1)
sock = socket.create_connection((host, int(port)), timeout=30)
proto = KafkaProtocol(client_id='old-admin')


def call(request):
    proto.send_request(request)
    sock.sendall(proto.send_bytes())
    while True:
        data = sock.recv(65536)
        if not data:
            raise Exception('connection closed by the broker after %s' % type(request).__name__)
        responses = proto.receive_bytes(data)
        if responses:
            return responses[0][1]


out = {}
r = call(CreateTopicsRequest_v0(create_topic_requests=[('old-v0', 3, 1, [], [('cleanup.policy', 'compact')])], timeout=10000))
out['createV0'] = r.topic_errors
r = call(CreateTopicsRequest_v1(create_topic_requests=[('old-v1', 2, 1, [], [])], timeout=10000, validate_only=True))
out['createV1ValidateOnly'] = r.topic_errors
r = call(CreateTopicsRequest_v1(create_topic_requests=[('old-v0', 1, 1, [], [])], timeout=10000, validate_only=False))
out['createV1Exists'] = r.topic_errors
r = call(DescribeConfigsRequest_v0(resources=[(2, 'old-v0', ['cleanup.policy', 'retention.ms'])]))
out['describeConfigsV0'] = [[e, m, t, n, [list(c) for c in entries]] for (e, m, t, n, entries) in r.resources]
r = call(CreateAclsRequest_v0(creations=[(2, 'old-v0', 'User:alice', '*', 3, 3)]))  # topic, READ, ALLOW
out['createAclsV0'] = r.creation_responses
r = call(DescribeAclsRequest_v0(resource_type=2, resource_name=None, principal=None, host=None, operation=1, permission_type=1))  # ANY
out['describeAclsV0'] = [r.error_code, [[t, n, [list(a) for a in acls]] for (t, n, acls) in r.resources]]
r = call(DeleteAclsRequest_v0(filters=[(2, 'old-v0', None, None, 1, 1)]))
out['deleteAclsV0'] = [[e, m, [list(a) for a in acls]] for (e, m, acls) in r.filter_responses]
r = call(DeleteTopicsRequest_v0(topics=['old-v0', 'never-was'], timeout=10000))
out['deleteV0'] = r.topic_error_codes
print(json.dumps(out))
