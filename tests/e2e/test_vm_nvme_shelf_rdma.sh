#!/usr/bin/env bash
# test_vm_nvme_shelf_rdma.sh: test_vm_nvme_shelf.sh over NVMe/RDMA (issue 24):
# soft-RoCE (rdma_rxe) on the guest's virtio NIC stands in for a RoCEv2 NIC;
# the target listens on rdma 10.0.2.15:4420 and the agent's --shelf says
# nvmeof:rdma:10.0.2.15:4420:NQN. Everything else is the tcp suite's.
AQ_VM_NVME_TRANSPORT=rdma exec bash "$(dirname "$0")/test_vm_nvme_shelf.sh"
