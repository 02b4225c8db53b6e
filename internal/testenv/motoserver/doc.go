// Package motoserver runs moto_server, moto's local emulator of the AWS APIs,
// on a free loopback port for tests and the local runner.
//
// Start launches `moto_server -H 127.0.0.1 -p PORT` in its own process group,
// waits until it answers HTTP and returns a Server; Endpoint is the URL to
// point SDK clients at (AWSConfig builds a ready aws.Config, Env the
// environment for a child process) and Stop kills the whole process group.
// Reset wipes all emulated state, which lets tests share one server.
//
// moto_server comes from `pip install "moto[server]"`. On Linux the server is
// also told to exit when the thread that started it dies, so a crashed test
// binary does not leave it behind.
package motoserver
