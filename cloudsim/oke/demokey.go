package oke

// DemoPrivateKeyPEM is the demo tenancy's API signing key: a published
// constant of kpool's source, NOT a secret. It opens the loopback emulator
// Demo makes (tenancy DemoTenancy, user DemoUser) and nothing else: no OCI
// tenancy has its public half. It is fixed, not made per process, so that
// an outside client (Oracle's CLI or an SDK in another language) can sign
// requests to "kpool cloudsim", which writes it to a file (WriteDemoConfig)
// rather than printing it. Never use it, or a key made like it, for a real
// tenancy.
const DemoPrivateKeyPEM = `-----BEGIN RSA PRIVATE KEY-----
MIIEogIBAAKCAQEAti8JDt6lwFoeNPFMmQnO4RLKYoHC6CBwMBfZR6NfBx3qlk27
ROt/lFkd7OfUCNqyh+55+f9gIU39fTEpKfjDzW6iomMJAvvx2ScH1+lPaf4vUhy4
DdME1i3etgjHxEowNcLvUGh2zyD20bIfQFW1k+4mSx8IphDGs6MVIEBebbLANZHN
b0MN65Osz+sEcey3BkVxX5rSkJbBiztogerXlGhwPON0RC4EuPxM+uIq2/aHrUuI
RL+7E7dvJdNMie6tlUA5Ue/wVi1XsOL9Unq5DY8htC9JOsmuQVff9tg3Yj4uupRU
yZRiIRCS90EHoTYMNJ56cuzA+xbZe2yeWWkAqwIDAQABAoIBAArqRYIpD8g2/gFR
BbRTlJwCirKdMKbErsQK4b87iAl+ntvze0lVTLcAId1cRGVlaPXg8VjrloBYUlwq
UluL5ntL6h2NjnAp1SMcBgnHFjV0/7PNOa/GWU9VvzarzwAxK7NE4x6vq5KcWH1W
zS2HFRJwXcX5bYS5k5YWqsDcamvrBAa+IkrgxvRKnwsGi6VRz91AfCKmG2pHrA+G
pfH0QRMCzzywomzko8UcO6Y6iYf1b8XGiPquAc/3rD6jIMjXHuv9ylfIbFRFT+Zx
fEi7PpJ4qpVhNDj+csK8IZuwKIUTMQlHc346yROBikPCt7O0GXKp4tC8nRYa9hlc
+MGK730CgYEA/c7Twb/I/PzN/PGOWpiGf3vWChPxshuu7UTK3K6q2kQ739sfjkm2
mtqTiptIb6QuG84V0MbLf6/pPr4+8ugjzVcOM1AhxlC4cUlHOUYmS3YVDgyuMHWw
sNfe+dZOyAIgExTAp6W4IYBPA5EQWVNYFG4WBbtxW796O/XufYCfv5UCgYEAt8HY
nI3+O8NpHdkbla3h4rbHl1Z3vDCB1lk8UxBLfr8dtxwLWQ0ThQHoyo7sDznOXzWs
yMm/Y7dsP3H0S0pePSzncp9GFq1uG7hUwBbsMHRaKKUjbuIyh+nJ+58iT5ODMLVo
9kfMhREeBqByHAmeIQ+yLxweqa0vAQ7DMqUarz8CgYA58agiiZhnOYgFgVhQkpXS
MQFyl48MbImJHbV6oF3dKsrIlowjvex0egZJFJ567m6gZnJQkbIP2qdTbbeNWTYj
QQa67EZpsjAJnQMnrj476B9yb66s3ZGTLhV30Fd4DhQohwpcu9bHvzVKySmEWyS2
tVNNx7dfjN1pJwJloKHX6QKBgDUDRJWt1Umyj3Hf/7hH6OH6L0y20mZFbD/FkMS5
773KLy1zdsajIh1+NoWxg+LEn4gSOR3YLlH7Scxn+L174AIwITmNP7AtKpXusOyV
8F/uQVB2i+licoeJaA8iksh4WyHDRFvAzP0auhnZUfJKyAbru1EiAKqc3vGkK6ZB
wZgLAoGAQ6hdpxZioc54usZIVK/mbI8LRmAt9EtMEd/wGjOBMJG8dgWSSTZKGp1J
We7obSOqMHKLVmF10oggeg2nUDloa4BStV/SqPKCjSTKvrq+kOl+vI41izgCocYd
Ne5BU3fl3ETro5GKL7D94qzMFQSNGQzVmZEPYwXpOYZdQbl1sAc=
-----END RSA PRIVATE KEY-----
`
