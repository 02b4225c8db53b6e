#!/bin/sh
# mk/deploy-check.sh: what `make deploy-check` checks before a deploy (README, "Deploying").
#   1. no REPLACE_ME placeholder left in samconfig.toml's [$SAM_ENV.deploy.parameters] (exit 2);
#   2. with AWS credentials (skipped cleanly without): the account's Lambda concurrency quota,
#      Bedrock model access for the chosen model, and the VPC's DNS settings, subnets and existing
#      endpoints when CreateVpcEndpoints=true. Each failure prints its fix; any failure exits 1.
# Environment: SAM_ENV (default "default"), SAMCONFIG (default samconfig.toml), AWS (default aws).
set -u
env_name=${SAM_ENV:-default}
config=${SAMCONFIG:-samconfig.toml}
aws_cli=${AWS:-aws}

section() { awk -v s="[$env_name.$1]" '/^\[/{on=($0==s)} on' "$config"; }
params=$(section deploy.parameters | grep -o '"[A-Za-z0-9]*=[^"]*"' | tr -d '"')
left=$(printf '%s\n' "$params" | grep 'REPLACE_ME' || true)
if [ -n "$left" ]; then
  echo "samconfig.toml [$env_name.deploy.parameters] still has placeholders; set these first:" >&2
  printf '%s\n' "$left" | sed 's/^/  /' >&2
  exit 2
fi
# param NAME DEFAULT: the value samconfig.toml gives the parameter, else the template's default.
param() { v=$(printf '%s\n' "$params" | sed -n "s/^$1=//p" | tail -n 1); [ -n "$v" ] && echo "$v" || echo "$2"; }
region=$(section global.parameters | sed -n 's/^region *= *"\(.*\)"/\1/p')
region=${region:-${AWS_REGION:-${AWS_DEFAULT_REGION:-}}}

if ! command -v "$aws_cli" >/dev/null 2>&1; then
  echo "deploy-check: the AWS CLI is not installed; skipping the account checks (quota, Bedrock, VPC DNS)"; exit 0
fi
if ! "$aws_cli" sts get-caller-identity --region "$region" >/dev/null 2>&1; then
  echo "deploy-check: no AWS credentials; skipping the account checks (quota, Bedrock, VPC DNS)"; exit 0
fi
a() { "$aws_cli" --region "$region" --output text "$@" 2>/dev/null; }
failed=0
fail() { echo "FAIL  $1"; echo "      fix: $2"; failed=1; }
ok() { echo "ok    $1"; }
skip() { echo "skip  $1"; }

# 1. Concurrency: the mappings' MaximumConcurrency, the scheduled and migrate functions, and
#    ReserveConcurrency's reservations above the 100 Lambda keeps unreserved.
backfill=$(param BackfillConcurrency 2)
need=$((5 + 10 + backfill + 3))
reserve=$(param ReserveConcurrency false)
limit=$(a lambda get-account-settings --query 'AccountLimit.ConcurrentExecutions')
case "$limit" in
  ''|*[!0-9]*) skip "concurrency quota: lambda get-account-settings did not answer" ;;
  *)
    if [ "$reserve" = true ] && [ "$limit" -lt 103 ]; then
      fail "ReserveConcurrency=true needs a concurrency quota of at least 103; the account has $limit" \
        "set ReserveConcurrency=false, or: aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 1000"
    elif [ "$limit" -lt "$need" ]; then
      fail "the account's concurrency quota is $limit; the mappings and scheduled functions may use $need at once (builders will throttle)" \
        "aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 1000 (or lower the mappings' MaximumConcurrency)"
    else
      ok "concurrency quota $limit (needs $need$( [ "$reserve" = true ] && echo ', and 103 with ReserveConcurrency'))"
    fi ;;
esac

# 2. Bedrock model access.
if [ "$(param BriefBuilder extractive)" = bedrock ]; then
  model=$(param BedrockModelId anthropic.claude-3-haiku-20240307-v1:0)
  foundation=$(param BedrockFoundationModelId "")
  case "$model" in
    us.*|eu.*|apac.*|global.*|us-gov.*|jp.*|au.*|ca.*)
      if [ -z "$foundation" ]; then
        fail "BedrockModelId $model is an inference profile and BedrockFoundationModelId is empty: the builder would be granted a model that does not exist" \
          "set BedrockFoundationModelId=${model#*.}"
        foundation=${model#*.}
      fi
      if a bedrock get-inference-profile --inference-profile-identifier "$model" >/dev/null; then
        ok "inference profile $model exists in $region"
      else
        fail "inference profile $model not found in $region" "aws bedrock list-inference-profiles --region $region; pick one listed there"
      fi ;;
    *) foundation=${foundation:-$model} ;;
  esac
  if a bedrock get-foundation-model --model-identifier "$foundation" >/dev/null; then
    ok "foundation model $foundation exists in $region"
  else
    fail "foundation model $foundation not found in $region (or no permission to read it)" "aws bedrock list-foundation-models --region $region"
  fi
  avail=$(a bedrock get-foundation-model-availability --model-id "$foundation" \
    --query '[authorizationStatus, entitlementAvailability, agreementAvailability.status]')
  if [ -z "$avail" ]; then
    skip "model access for $foundation: this AWS CLI cannot ask (get-foundation-model-availability); check the Bedrock console's Model access page"
  else
    case "$avail" in
      *NOT_AUTHORIZED*|*NOT_AVAILABLE*|*PENDING*|*ERROR*|*EXPIRED*)
        fail "model access for $foundation: $avail" \
          "Bedrock console > Model access: request access (Anthropic: submit the use-case form); invoke the model once as an administrator (the Marketplace subscription needs aws-marketplace:Subscribe)" ;;
      *) ok "model access for $foundation: $avail" ;;
    esac
  fi
fi

# 3. VPC DNS, subnets per AZ and existing endpoints, for CreateVpcEndpoints=true.
if [ "$(param CreateVpcEndpoints false)" = true ]; then
  vpc=$(param VpcId "")
  for attr in enableDnsSupport enableDnsHostnames; do
    cap=$(echo "$attr" | sed 's/^e/E/')
    v=$(a ec2 describe-vpc-attribute --vpc-id "$vpc" --attribute "$attr" --query "$cap.Value")
    case "$v" in
      True|true) ok "VPC $vpc $attr" ;;
      '') skip "VPC $vpc $attr: describe-vpc-attribute did not answer" ;;
      *) fail "VPC $vpc has $attr off: the interface endpoints' private DNS names will not resolve" \
           "aws ec2 modify-vpc-attribute --vpc-id $vpc --$(echo "$attr" | sed 's/enableDns/enable-dns-/; s/Support/support/; s/Hostnames/hostnames/')" ;;
    esac
  done
  subnets=$(param SubnetIds "" | tr ',' ' ')
  if [ -n "$subnets" ]; then
    # shellcheck disable=SC2086
    dup=$(a ec2 describe-subnets --subnet-ids $subnets --query 'Subnets[].AvailabilityZone' | tr '\t' '\n' | sort | uniq -d)
    if [ -n "$dup" ]; then
      fail "SubnetIds has more than one subnet in $(echo $dup): an interface endpoint takes one subnet per Availability Zone" \
        "keep one subnet per AZ in SubnetIds"
    else
      ok "SubnetIds: one subnet per Availability Zone"
    fi
  fi
  services="events sqs"
  [ "$(param BriefBuilder extractive)" = bedrock ] && services="$services bedrock-runtime"
  for svc in $services; do
    id=$(a ec2 describe-vpc-endpoints --filters "Name=vpc-id,Values=$vpc" "Name=service-name,Values=com.amazonaws.$region.$svc" \
      "Name=vpc-endpoint-type,Values=Interface" --query "VpcEndpoints[?PrivateDnsEnabled==\`true\` && State!='deleted' && State!='deleting'].VpcEndpointId")
    if [ -n "$id" ] && [ "$id" != None ]; then
      fail "VPC $vpc already has a private-DNS interface endpoint for $svc ($id): the stack's would fail to create" \
        "set CreateVpcEndpoints=false and keep the existing endpoints (add an S3 gateway endpoint yourself), or delete $id"
    else
      ok "no existing private-DNS endpoint for $svc in $vpc"
    fi
  done
  [ -n "$(param RouteTableIds "")" ] || fail "CreateVpcEndpoints=true without RouteTableIds: the custom resource's reply to S3 has no route" \
    "set RouteTableIds to the route tables of SubnetIds (aws ec2 describe-route-tables --filters Name=association.subnet-id,Values=<subnet>)"
fi
exit $failed
