package samtemplate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/internal/testenv/motoserver"
)

// runDeployCheck runs mk/deploy-check.sh over a samconfig.toml holding params, with env.
func runDeployCheck(t *testing.T, env []string, params ...string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	quoted := make([]string, len(params))
	for i, p := range params {
		quoted[i] = fmt.Sprintf("  %q,", p)
	}
	cfg := "version = 0.1\n[default.global.parameters]\nregion = \"" + motoserver.Region + "\"\n" +
		"[default.deploy.parameters]\nparameter_overrides = [\n" + strings.Join(quoted, "\n") + "\n]\n"
	path := filepath.Join(dir, "samconfig.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(root, "mk", "deploy-check.sh"))
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "SAMCONFIG=" + path, "SAM_ENV=default",
		"AWS_MAX_ATTEMPTS=1"}, env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("deploy-check: %v\n%s", err, out)
	return "", 0
}

// awsCLI runs the AWS CLI against moto and returns its text output.
func awsCLI(t *testing.T, srv *motoserver.Server, args ...string) string {
	t.Helper()
	cmd := exec.Command("aws", append([]string{"--output", "text"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, srv.Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// make deploy-check: placeholders refuse; without credentials the account checks skip cleanly;
// against moto (which models EC2's VPC attributes, subnets and endpoints, not Lambda's account
// settings or Bedrock) a VPC without DNS hostnames, two subnets in one AZ and an existing
// private-DNS endpoint each fail with their fix, and pass once fixed.
func TestDeployCheck(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("aws"); err != nil {
		ci.MissingTool(t, "the AWS CLI is not installed")
	}
	out, code := runDeployCheck(t, nil, "SubnetIds=REPLACE_ME_subnet-id-1", "DbName=brief")
	if code != 2 || !strings.Contains(out, "SubnetIds=REPLACE_ME_subnet-id-1") {
		t.Fatalf("placeholders: exit %d\n%s", code, out)
	}
	noCreds := []string{"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent",
		"AWS_EC2_METADATA_DISABLED=true"}
	out, code = runDeployCheck(t, noCreds, "CreateVpcEndpoints=true", "VpcId=vpc-1")
	if code != 0 || !strings.Contains(out, "no AWS credentials; skipping") {
		t.Fatalf("without credentials: exit %d\n%s", code, out)
	}

	srv, err := motoserver.Start(context.Background(), nil)
	if errors.Is(err, motoserver.ErrNotInstalled) {
		ci.MissingTool(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop() }()
	vpc := awsCLI(t, srv, "ec2", "create-vpc", "--cidr-block", "10.8.0.0/16", "--query", "Vpc.VpcId")
	az := motoserver.Region + "a"
	s1 := awsCLI(t, srv, "ec2", "create-subnet", "--vpc-id", vpc, "--cidr-block", "10.8.1.0/24", "--availability-zone", az, "--query", "Subnet.SubnetId")
	s2 := awsCLI(t, srv, "ec2", "create-subnet", "--vpc-id", vpc, "--cidr-block", "10.8.2.0/24", "--availability-zone", az, "--query", "Subnet.SubnetId")
	awsCLI(t, srv, "ec2", "modify-vpc-attribute", "--vpc-id", vpc, "--enable-dns-hostnames", `{"Value":false}`)
	ep := awsCLI(t, srv, "ec2", "create-vpc-endpoint", "--vpc-id", vpc, "--vpc-endpoint-type", "Interface",
		"--service-name", "com.amazonaws."+motoserver.Region+".sqs", "--subnet-ids", s1, "--private-dns-enabled", "--query", "VpcEndpoint.VpcEndpointId")

	params := []string{"CreateVpcEndpoints=true", "VpcId=" + vpc, "SubnetIds=" + s1 + "," + s2,
		"BriefBuilder=bedrock", "BedrockModelId=eu.anthropic.claude-3-7-sonnet-20250219-v1:0"}
	out, code = runDeployCheck(t, srv.Env(), params...)
	t.Logf("against moto, before the fixes:\n%s", out)
	for _, want := range []string{
		"skip  concurrency quota", // moto does not model lambda get-account-settings
		"enableDnsHostnames off", "--enable-dns-hostnames",
		"more than one subnet in " + az, "private-DNS interface endpoint for sqs (" + ep + ")",
		"without RouteTableIds",
		// An inference profile without its foundation model would grant a model that does not exist.
		"BedrockFoundationModelId is empty", "fix: set BedrockFoundationModelId=anthropic.claude-3-7-sonnet-20250219-v1:0",
		"no existing private-DNS endpoint for bedrock-runtime",
		"ok    VPC " + vpc + " enableDnsSupport", "ok    no existing private-DNS endpoint for events",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("deploy-check output lacks %q", want)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}

	awsCLI(t, srv, "ec2", "modify-vpc-attribute", "--vpc-id", vpc, "--enable-dns-hostnames", `{"Value":true}`)
	awsCLI(t, srv, "ec2", "delete-vpc-endpoints", "--vpc-endpoint-ids", ep)
	rt := awsCLI(t, srv, "ec2", "create-route-table", "--vpc-id", vpc, "--query", "RouteTable.RouteTableId")
	out, code = runDeployCheck(t, srv.Env(), "CreateVpcEndpoints=true", "VpcId="+vpc, "SubnetIds="+s1, "RouteTableIds="+rt)
	t.Logf("after the fixes:\n%s", out)
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("fixed VPC: exit %d\n%s", code, out)
	}
}
